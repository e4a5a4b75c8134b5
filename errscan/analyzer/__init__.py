"""The pipeline stages, one module each; errscan/__init__.py chains them."""
