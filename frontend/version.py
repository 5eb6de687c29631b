"""tfn's version (`tfn.__version__`), also written into saved models' manifests."""
__version__ = "0.1.0"
