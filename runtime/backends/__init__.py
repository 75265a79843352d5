"""Built-in backends. Each module imports its heavy dependencies inside the functions that use them."""
