"""Utilities with no qmltest dependency above them: file safety, intervals, distributions, memo,
parallel task placement, budgets, garbage-collector tuning."""
