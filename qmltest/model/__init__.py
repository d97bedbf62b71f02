"""The model format: OpenQASM 3 text and manifest (artifact), the layer/gate IR, QASM spans, splicing
and readout. Data only: nothing here simulates."""
