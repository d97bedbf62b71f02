"""QCov coverage: profiling bounds, KSC/SCC/TSC criteria, input diversity (QCov Sec. 3, 4.2, 4.5, 4.6)."""
