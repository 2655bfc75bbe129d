"""The SAGE story corpus: manifest, acquisition, text cleaning and loading."""
