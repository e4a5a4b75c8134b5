"""The pipeline stages, one module each; errscan/api.py chains them."""
