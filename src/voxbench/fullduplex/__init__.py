"""fullduplex room."""
