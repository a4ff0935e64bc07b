"""``teachd demo``: the whole loop on the bundled sample app, and a virtual
display to run it on."""
