"""fasteval's version, in a module of its own: any layer may read it (outputs are stamped
with it) without loading the package's facade or ``importlib.metadata``. pyproject.toml
carries the same number; a test keeps the two equal."""

__version__ = "0.1.0"
