"""Teaching: recordings on disk, compiling them into the store, retention, and
``teachd teach`` as a child process."""
