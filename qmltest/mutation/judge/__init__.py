"""Verdicts over stored evidence: kill criteria, scoring (the report as a function of the rows) and
comparison with a baseline run."""
