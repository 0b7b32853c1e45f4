"""The use cases, one module per noun, and the table that maps verbs to them."""
