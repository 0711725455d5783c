"""``ddpfix rehearse``: run the user's own script on CPU ranks (the one part of ddpfix that runs
user code, and only when asked). ``warm``: a warm interpreter the runs are forked from."""
