"""Coverage-guided fuzzing (QCov Sec. 4.4, Algorithm 1) with DeepHunter-style input mutators."""
