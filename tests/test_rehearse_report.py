"""The rehearsal's report from recorded material, without running anything (no torch needed)."""

from __future__ import annotations

from ddpfix.rehearse.report import _where_in_stack

DUMP = '''Thread 0x00007f0000000001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 324 in wait
  File "/home/u/proj/logger.py", line 9 in flush_loop

Current thread 0x00007f0000000002 (most recent call first):
  File "/venv/lib/python3.11/site-packages/torch/autograd/graph.py", line 824 in _engine_run_backward
  File "/venv/lib/python3.11/site-packages/lightning/fabric/fabric.py", line 449 in backward
  File "/home/u/proj/train.py", line 19 in main
  File "/home/u/proj/train.py", line 27 in <module>
'''


def test_a_rank_with_no_collective_open_is_placed_by_its_stack():
    """The watchdog's faulthandler dump of a hung rank: the innermost frame of the user's code in
    the current thread (not another thread's, not a library's)."""
    where = _where_in_stack(DUMP)
    assert where is not None and where.endswith("train.py:19 in main")
    assert _where_in_stack('Current thread 0x1 (most recent call first):\n'
                           '  File "/venv/lib/python3.11/site-packages/torch/x.py", line 1 in f\n') is None
