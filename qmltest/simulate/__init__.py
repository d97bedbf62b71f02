"""Simulation: the backend interface and registry (backend, backends/), the programs they run (program,
engine), kernels (statevector, density, fusion, arraykernel), noise, prefix checkpoints and linear
forms."""
