import sys

from sitegen.build import main

sys.exit(main())
