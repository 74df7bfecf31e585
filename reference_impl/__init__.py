"""The reference interpreter of the rules of Thousand, driven only by a resolved profile."""
