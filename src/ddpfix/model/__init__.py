"""The project model: what the program does, asked by every rule, answered in one place each.

- ``program``: which files make the program a path belongs to (its project root).
- ``classes``: which classes are LightningModules, DataModules, Callbacks, torchmetrics Metrics...,
  resolved across files through imports, aliases, relative imports and package re-exports.
- ``class_files``: which class of another file of the program a name means, parsed when a proof
  needs its body (a submodule's class defined in ``components.py``).
- ``constructions``: where a class of the program is built and what each construction hands it
  (``self.model = model`` holds a known module where every construction hands one, left as built).
- ``versions``: the Lightning in force (the project's pins, else the installed distribution) and what
  that version has (keywords, hooks); ``installed``: the interpreter's distributions, read from their
  metadata files.
- ``handed_data``: what data each ``fit``/``validate``/``test``/``predict`` hands Lightning, on which
  Trainer, and which of them may train a module.
- ``outside_code``, ``rank_reads``: code brought in from outside the program; state kept on one rank.

"Unknown" is an answer here: a question the model cannot settle says so, with where the unknown comes
from, and a rule turns it into an unsafe fix or a report, never into a safe one.
"""
