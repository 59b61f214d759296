"""Privacy events, composition rules and the curves they are proved with: below the mechanisms
that emit the events, and below both the graph and the accountant that compose them."""
