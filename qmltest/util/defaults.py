"""Defaults more than one command shares, declared once (the mutation options declare theirs in
`qmltest.mutation.options.Options`)."""

SHOTS = 1000
"""Shots per input when none are given (evaluate, diff)."""
