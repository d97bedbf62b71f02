"""What is simulated and drawn per (mutant, suite): the evaluator (probabilities, shots), the evidence
record, votes, statistics and sequential decisions."""
