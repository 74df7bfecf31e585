"""Every tuning number of ``thousand fit``, each with the reason for its value.

The search, the readings it takes values from, the residual's pairs, fuzz's explanation of a
finding and the asking all read their numbers from one ``Policy``; a ``Fitter`` holds the one
it was given (``POLICY`` by default), so a test or an experiment changes a number in one
place. A number that is a fact of the game (eight tricks, the grid of 5 bids move on) is no
tuning number and stays beside the code that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Policy:
    # -- the joint search of a group of differing observations (``fit.Fitter._beam``) --
    # cases of a group a joint change is scored on, those showing most of its observations: a
    # coupled pair of knobs shows in two or three cases, and every case more is a replay per change
    sample: int = 3
    # knobs changed together at most: the bid cap's ceiling, marriage condition and maximum are
    # the widest coupling the schema has (spec/diagnosis.yaml names no group needing four)
    depth: int = 3
    # joint changes carried to the next depth: with ties kept (``tied``) three keep the two
    # readings of a coupled knob and the switch that goes with them
    beam: int = 3
    # every combination of a group's knobs is scored when their value lists multiply to this few:
    # then the beam's pruning can lose nothing, for a few seconds of replays
    exhaustive: int = 64
    # joint changes one group's beam scores at most: a score group decided by fifty knobs would
    # otherwise replay its sample thousands of times
    group_budget: int = 160
    # values of a knob carried past the first depth: those that did best alone
    per_knob: int = 4
    # and a number's first values (its readings), whatever they did alone: a line read from the
    # scores does nothing alone where a switch beside it is still off
    carried: int = 2
    # changes as good as the best on a sample carried on or checked over every case at most: a
    # sample of one case ties a maximum of 525 with four aces worth anything
    tied: int = 8
    # a group's best joint changes then scored over every case
    over_all: int = 3
    # knobs of a group searched without the cases' own knob lists: a wider group is a score
    # decided by some forty knobs, searched on the knobs its sample's cases exercise
    wide_group: int = 12
    # observations a group needs for a joint search: a coupled pair can show in a single one
    min_group: int = 1
    # times a group's sample is widened by the cases a change perfect on it broke: each widening
    # runs the group's whole search again, so two bound a group at three searches
    widenings: int = 2
    # ways of making a joint change pass the cross-knob checks tried, each scored
    repairs: int = 3
    # passes over the groups, and rounds of the stop rule: a change taken in one pass can make
    # another group's change pass, and each pass searches every group again, so three bound the cost
    passes: int = 3
    # -- judging a change over every case (``fit.Fitter._fixes``) --
    # a change that breaks a matching case must fix this many observations for each it breaks:
    # a value right for most cases and wrong for a few is still taken, a trade of one for one is not
    broken_weight: int = 2
    # cases replayed between two looks at whether a change already lost more than it gained
    chunk: int = 16
    # -- the values tried (``candidates``) --
    # numbers read from the observations tried for one knob, the commonest first: past six the
    # readings are score deltas that stand for no knob
    readings: int = 6
    # amounts read from the edges of differing legal sets, tried after the commonest readings
    edges: int = 2
    # knobs an event type only one side sent names, at most, to be searched first in a wide
    # group: a ``dump`` event names its section's three knobs, a score some forty
    named: int = 4
    # marriage tables checked against the holders' highest amounts at most: four suits of a few
    # worths each, 4**4
    marriage_tables: int = 256
    # a bundled value up to this is a count, whose neighbours are tried too: a count shows only
    # as a score that changes from the fifth give-up on, among many other numbers
    small_count: int = 10
    # the neighbours tried of a count and of an amount: a count is off by one or two, an amount
    # by the step of the grid most profiles bid on
    near_count: tuple[int, ...] = (-1, 1, 2)
    near_amount: tuple[int, ...] = (-10, 10)
    # an amount's neighbours in a knob's whole domain (``fit.knob_domain``: what asking tries of a
    # knob no observation pins, and what the benchmark draws secret values from): two steps of
    # the grid each way, so that a value no bundled profile uses is in it
    domain_near: tuple[int, ...] = (-20, -10, 10, 20)
    # other values tried of a knob fit took when it lists the equally consistent ones: each is a
    # replay of the whole corpus, and past six the readings are numbers that stand for nothing
    equivalents_tried: int = 6
    # a change found in another knob's place is also tried so many times as far from the current
    # value: the one read is the nearest that sets the example right, and another case can need
    # the line further out; doubling three times spans eight times the distance in three replays
    further: tuple[int, ...] = (2, 4, 8)
    # -- the residual's pairs (``fit.Fitter.paired``) --
    # before a residual cause is called a rule no knob writes, pairs of its switches are tried
    # on its cases: so many switches, rule sets, cases and causes (the largest first) at most
    pair_switches: int = 6
    pair_budget: int = 40
    pair_cases: int = 8
    pair_causes: int = 4
    # -- fuzz's explanation of a proven finding (``fit.Fitter.explaining``) --
    # values that alone came nearer (fewer observations missed) paired with every other, and
    # rule sets in all: a one-deal transcript replays in hundredths of a second, and a score
    # finding has fifty deciding knobs of a few values each
    explain_nearer: int = 4
    explain_budget: int = 1500
    # -- asking the implementation (``asking``) --
    # deals two references play against each other to find a question: a rule that only a rare
    # situation shows (a tie at the target, a lock from 900) needs a few hundred random deals;
    # fuzz's positions built for one rule reach most such situations in far fewer
    deals: int = 200
    # questions asked of one pair before it is called untold: each is a fresh deal, so another
    # difference of the implementation that comes first on one deal rarely comes first on three
    questions: int = 3
    # seconds to wait for each reply of either reference
    timeout: float = 10.0
    # values of a number asked around the fitted one, as many below it as above, nearest first:
    # the corpus bounds a threshold only where its cases reach it, so the true value can lie on
    # either side of the fitted one (a lock fitted from 890 that the engine plays from 880, a
    # line below every equally consistent value), and six steps of 5 each way span 30 points
    grid: int = 12
    # knobs deciding the residual's cases whose other values are tried there: the residual of
    # an engine with a bug lists a case's every deciding knob, and a score group has forty
    hidden_knobs: int = 12
    # residual cases whose deciding knobs are tried: each knob value is replayed on all of them,
    # and an engine with a bug in every deal leaves the whole corpus in the residual
    hidden_cases: int = 24
    # knobs whose cases the implementation's record never reaches that are asked about: each
    # question that finds nothing costs its ``deals``, and an engine cut short everywhere (a
    # redeal rule of its own, a skipped phase) leaves most knobs unpinned
    unpinned_knobs: int = 12
    # deals of the implementation's own play under the fitted rules searched for a question
    # where the references, playing each other, met none: 1k's uncapped defender shows about
    # once in a hundred deals (a defender under the lock who scores past the cap)
    hunt_deals: int = 400
    # seconds asking may take in all before the alternatives left are reported as not asked: a
    # question costs one to ten seconds, and the search itself takes about a minute on a corpus
    seconds: float = 120.0
    # searches over the corpus and the questions answered, when the rules kept do not play every
    # answer: the second reads the numbers the answers showed (a match won at exactly 1095, which
    # no corpus score reaches) and plays them with the corpus; each costs a search
    rounds: int = 2


POLICY = Policy()
