"""What the rules know of Python code and of Lightning, shared by all of them and by no rule alone:
tree shapes and one cached walk (``ast_shapes``), names a statement binds (``names``), rank guards
(``ranks``), Lightning's names and hooks (``lightning``), what an unknown call may do (``effects``),
the trigger words and text prefilters a file passes before it is parsed (``text``), and what the
text around a node holds that the tree does not (``tree_text``: comments, parentheses).

Rules (``ddpfix.rules``) import from here; nothing here imports a rule.
"""
