"""How long the language server makes an editor wait: first diagnostics, "fix all" on a big file,
and whether one document's work holds up another's. Over stdio, as an editor talks to it.

    python bench/lsp_latency.py [--src DIR] [--classes N] [--runs N] [--out FILE]

``--src``: the ``src`` folder whose ``ddpfix`` runs as ``python -m ddpfix lsp`` (default this
checkout's; give another checkout's to compare, e.g. ``git archive main src | tar -x -C /tmp/main``
then ``--src /tmp/main/src``). The server runs with byte code cached (as an installed package
has it), after one untimed start that writes the cache.

What it measures, each as the client sees it (wall time from sending to receiving):

- **first diagnostics** (median of ``--runs`` fresh servers): start the process, ``initialize``,
  open a small fixture file, until its ``publishDiagnostics``; the ``initialize`` answer on its own;
  and where that time goes (the interpreter's own start, the import of the protocol layer, of
  ddpfix's CLI and server modules, the first analysis), timed inside one process the same way. The
  protocol layer is ddpfix's own (``lsp_rpc``, ``lsp_workspace``: asyncio, json, threads); for a
  ``--src`` from before it, pygls and its lsprotocol types;
- **big file**: a generated file of ``--classes`` LightningModules (150: about 4,500 lines and
  1,200 findings, 600 of them with a safe fix), like the one an issue measured: its diagnostics
  after ``didOpen``; "fix all" (``source.fixAll.ddpfix``, through ``codeAction/resolve`` where the
  server offers it), and how many edits it answers with (their result is checked to compile and to
  hold every safe fix);
- **no blocking**: while "fix all" runs on a new version of the big file (the request that runs
  it: ``codeAction/resolve`` where the server defers the edit, else the code action request), a
  small document opened in another window: how long until its diagnostics arrive, and whether
  before "fix all" answered;
- **cancel**: "fix all" on another new version, its running request cancelled
  (``$/cancelRequest``) after 0.5 s: how long until the answer, and its error code (-32800,
  RequestCancelled, when honoured); then an edit to the small document: how long until its new
  diagnostics (the server's 0.3 s pause after typing included).

Wall times move with the machine's load; CPU seconds (the server process's, read from ``/proc``,
and the start-up phases') hardly do, so compare those between runs. The server's own share of
"fix all" is its CPU time minus the engine's for the same fix run (``engine_fix_cpu_s``, printed
beside it); the engine's speed on big files is bench/phases.py's subject.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMALL_FIXTURE = ROOT / "fixtures" / "rank-gated-log" / "guard_spellings.py"
FIX_ALL = "source.fixAll.ddpfix"
WAIT = 600.0  # seconds: the baseline's "fix all" on the big file took minutes on a busy machine

HEAD = '''import lightning as L
import torch
import torch.nn.functional as F


'''
MODULE = '''class Model{n}(L.LightningModule):
    """Model number {n}: a LightningModule with the usual DDP pitfalls.

    The hooks below log per epoch, gate logs on rank zero and build tensors on a fixed GPU.
    """

    def training_step(self, batch, batch_idx):
        x, y = batch
        weights = torch.ones(x.shape[1], device="cuda:0")
        scale = torch.full((1,), 2.0, device="cuda:0")
        offset = torch.zeros(x.shape[1], device="cuda:0")
        steps = torch.arange(x.shape[0], device="cuda:0")
        out = self.net(x) * weights * scale + offset
        return self.loss(out, y) + steps.float().mean() * 0

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("val_loss", loss)
        self.log("val_loss_bar", loss, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        # rank zero reports the epoch
        if self.global_rank == 0:
            self.log("a", 1.0)
        if self.trainer.global_rank == 0:
            self.log("c", 3.0)


'''
TAIL = '''if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=[0, 1], strategy="ddp")
    trainer.fit(Model0())
'''
SAFE_PER_MODULE = 4  # the four device="cuda:0" (DDP006, safe: devices=[0, 1] puts rank 0 on cuda:0)
FINDINGS_PER_MODULE = 8  # and two DDP004, two DDP003 (unsafe from one file's facts)


def big_file(classes: int) -> str:
    """Fixture-like LightningModules, repeated: many findings of several rules in one file."""
    return HEAD + "".join(MODULE.format(n=n) for n in range(classes)) + TAIL


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used so far, all its threads (Linux ``/proc``): unlike wall time,
    it hardly moves with the load of other processes on a shared machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Client:
    """JSON-RPC over the server's stdio; every message is time-stamped as it arrives."""

    def __init__(self, src: Path, cwd: Path, pycache: Path):
        env = dict(os.environ, PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=str(pycache))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.started = time.perf_counter()
        self.process = subprocess.Popen([sys.executable, "-m", "ddpfix", "lsp"], cwd=cwd, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.inbox: queue.Queue = queue.Queue()
        self.kept: list[tuple[float, dict]] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(stream.read(length))
            self.inbox.put((time.perf_counter(), message))

    def send(self, message: dict) -> float:
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return time.perf_counter()

    def notify(self, method: str, params) -> float:
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params) -> tuple[int, float]:
        self.next_id += 1
        return self.next_id, self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})

    def wait(self, match, timeout: float = WAIT) -> tuple[float, dict]:
        """The first message (kept or new) ``match`` accepts, with when it arrived."""
        for index, (when, message) in enumerate(self.kept):
            if match(message):
                del self.kept[index]
                return when, message
        deadline = time.perf_counter() + timeout
        while True:
            try:
                item = self.inbox.get(timeout=max(0.0, deadline - time.perf_counter()))
            except queue.Empty:
                raise TimeoutError("no answer in time") from None
            if item is None:
                raise RuntimeError("the server exited")
            when, message = item
            if "id" in message and "method" in message:  # a request of the server's
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            if match(message):
                return when, message
            self.kept.append(item)

    def response(self, request_id: int, timeout: float = WAIT) -> tuple[float, dict]:
        return self.wait(lambda m: m.get("id") == request_id and "method" not in m, timeout)

    def diagnostics(self, uri: str, version: int, timeout: float = WAIT) -> tuple[float, dict]:
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri and m["params"].get("version") == version, timeout)

    def initialize(self, root: Path) -> float:
        capabilities = {  # what Neovim 0.10 and VS Code say about code actions and edits
            "textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]},
                                            "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}}}},
            "workspace": {"workspaceEdit": {"documentChanges": True}},
        }
        request_id, _ = self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities})
        when, _ = self.response(request_id, 120)
        self.notify("initialized", {})
        return when

    def open(self, path: Path, text: str, version: int = 1) -> float:
        return self.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "python",
                                                                     "version": version, "text": text}})

    def change(self, path: Path, text: str, version: int) -> float:
        return self.notify("textDocument/didChange", {"textDocument": {"uri": path.as_uri(), "version": version},
                                                      "contentChanges": [{"text": text}]})

    def close(self) -> None:
        try:
            request_id, _ = self.request("shutdown", None)
            self.response(request_id, 10)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
            self.process.wait()


def fix_all_request(client: Client, path: Path) -> int:
    request_id, _ = client.request("textDocument/codeAction", {
        "textDocument": {"uri": path.as_uri()},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10**6, "character": 0}},
        "context": {"diagnostics": [], "only": [FIX_ALL]},
    })
    return request_id


def finish_fix_all(client: Client, request_id: int) -> tuple[float, dict]:
    """The "fix all" action with its edit: resolved by a second request where the server left it out."""
    when, answer = client.response(request_id)
    actions = answer.get("result") or []
    action = next((a for a in actions if a.get("kind") == FIX_ALL), None)
    if action is not None and "edit" not in action:
        resolve_id, _ = client.request("codeAction/resolve", action)
        when, answer = client.response(resolve_id)
        action = answer.get("result")
    return when, action or {}


def start_fix_all(client: Client, path: Path) -> int:
    """Set "fix all" going and return the id of the request that runs it: the resolve request
    where the server answers the list at once and leaves the edit to ``codeAction/resolve``, else
    the list request itself (still running after a second)."""
    request_id = fix_all_request(client, path)
    try:
        _, answer = client.response(request_id, 1.0)
    except TimeoutError:
        return request_id
    action = next((a for a in answer.get("result") or [] if a.get("kind") == FIX_ALL), None)
    if action is None or "edit" in action:
        raise RuntimeError("fix all answered within a second: nothing to measure")
    resolve_id, _ = client.request("codeAction/resolve", action)
    return resolve_id


def edits_of(action: dict, uri: str) -> list[dict]:
    edit = action.get("edit") or {}
    if "documentChanges" in edit:
        return [e for change in edit["documentChanges"] if change["textDocument"]["uri"] == uri for e in change["edits"]]
    return (edit.get("changes") or {}).get(uri, [])


def apply(text: str, edits: list[dict]) -> str:
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]  # the file is ASCII, \n

    def offset(position: dict) -> int:
        return starts[position["line"]] + position["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[:offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]):]
    return text


def first_diagnostics(src: Path, work: Path, pycache: Path, runs: int) -> dict:
    small = work / "small.py"
    small.write_text(SMALL_FIXTURE.read_text())
    initialized, diagnosed, cpu = [], [], []
    for _ in range(runs):
        client = Client(src, work, pycache)
        try:
            initialized.append(client.initialize(work) - client.started)
            client.open(small, small.read_text())
            when, _ = client.diagnostics(small.as_uri(), 1, 120)
            cpu.append(cpu_seconds(client.process.pid))
            diagnosed.append(when - client.started)
        finally:
            client.close()
    return {"initialize_s": statistics.median(initialized), "first_diagnostics_s": statistics.median(diagnosed),
            "first_diagnostics_server_cpu_s": statistics.median(cpu), "runs": runs}


STARTUP_PHASES = """\
import importlib.util, sys, time
start = time.process_time()  # the interpreter's start-up so far (site and its imports)
own = importlib.util.find_spec("ddpfix.lsp_rpc") is not None
for name in ["ddpfix.lsp_rpc", "ddpfix.lsp_workspace"] if own else ["lsprotocol.types", "pygls.lsp.server"]:
    __import__(name)
protocol_done = time.process_time()
import ddpfix.cli, ddpfix.lsp
ddpfix_done = time.process_time()
from ddpfix.lsp_document import analyse
path = sys.argv[1]
analyse("file://" + path, 1, open(path).read(), path, len, None).diagnostics()
analysed = time.process_time()
print(start, protocol_done - start, ddpfix_done - protocol_done, analysed - ddpfix_done, "libcst" in sys.modules,
      "own" if own else "pygls")
"""


def startup_phases(src: Path, work: Path, pycache: Path, runs: int) -> dict:
    """Where the first diagnostics' time goes, in one process as the server's start-up runs it
    (CPU seconds): the interpreter's start, importing the protocol layer (ddpfix's own, or pygls
    and lsprotocol for a ``--src`` from before), ddpfix's CLI and server modules, then the first
    analysis of the small file (the engine and rules load here)."""
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=str(pycache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    phases = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", STARTUP_PHASES, str(work / "small.py")], env=env,
                             capture_output=True, text=True, check=True, timeout=120).stdout.split()
        phases.append([float(value) for value in out[:4]] + [out[4] == "True", out[5]])
    names = ["cpu_interpreter_start_s", "cpu_import_protocol_layer_s", "cpu_import_ddpfix_cli_and_lsp_s", "cpu_first_analysis_s"]
    found = {name: statistics.median(row[k] for row in phases) for k, name in enumerate(names)}
    found["protocol_layer"] = phases[0][5]  # "own" (lsp_rpc) or "pygls"
    found["libcst_loaded_for_diagnostics"] = any(row[4] for row in phases)
    return found


def big_file_session(src: Path, work: Path, pycache: Path, classes: int) -> dict:
    big, other = work / "big.py", work / "other.py"
    text = big_file(classes)
    big.write_text(text)
    other_text = SMALL_FIXTURE.read_text()
    other.write_text(other_text)
    found: dict = {"lines": text.count("\n"), "classes": classes}
    client = Client(src, work, pycache)
    try:
        client.initialize(work)
        sent = client.open(big, text)
        when, message = client.diagnostics(big.as_uri(), 1)
        found["big_diagnostics_s"] = when - sent
        found["big_findings"] = len(message["params"]["diagnostics"])

        sent, cpu = time.perf_counter(), cpu_seconds(client.process.pid)
        when, action = finish_fix_all(client, fix_all_request(client, big))
        found["fix_all_s"] = when - sent
        found["fix_all_server_cpu_s"] = cpu_seconds(client.process.pid) - cpu
        edits = edits_of(action, big.as_uri())
        fixed = apply(text, edits)
        compile(fixed, "big.py", "exec")
        found["fix_all_edits"] = len(edits)
        found["fix_all_complete"] = fixed.count("self.device") - text.count("self.device") == SAFE_PER_MODULE * classes

        # No blocking: another document's diagnostics while "fix all" runs on a new version.
        version = 2
        text += "# edited\n"
        client.change(big, text, version)
        client.diagnostics(big.as_uri(), version)
        request_id = start_fix_all(client, big)
        time.sleep(0.5)
        sent = client.open(other, other_text)
        when, _ = client.diagnostics(other.as_uri(), 1)
        found["other_diagnostics_during_fix_all_s"] = when - sent
        done, _ = client.response(request_id)
        found["other_before_fix_all_answered"] = when < done

        # Cancel: "fix all" on another new version, cancelled after half a second.
        version = 3
        text += "# edited again\n"
        client.change(big, text, version)
        client.diagnostics(big.as_uri(), version)
        request_id = start_fix_all(client, big)
        time.sleep(0.5)
        sent = client.notify("$/cancelRequest", {"id": request_id})
        when, answer = client.response(request_id)
        found["cancel_answer_s"] = when - sent
        found["cancel_error_code"] = (answer.get("error") or {}).get("code")
        client.change(other, other_text + "\n", 2)
        sent = time.perf_counter()
        when, _ = client.diagnostics(other.as_uri(), 2)
        found["other_diagnostics_after_cancel_s"] = when - sent  # includes the server's debounce
    finally:
        client.close()
    return found


def engine_fix_time(src: Path, work: Path, classes: int) -> float:
    """The engine's own CPU time for the same "fix all" run, in a subprocess with ``src`` (for the
    server's share of the server's CPU time for "fix all")."""
    script = (
        "import sys, time\n"
        "from ddpfix.lsp_document import settings_for\n"
        "from ddpfix.sources import fix_source\n"
        "path = sys.argv[1]\n"
        "settings = settings_for(path)\n"
        "data = open(path, 'rb').read()\n"
        "start = time.process_time()\n"
        "fix_source(path, data, settings.rules, options={**settings.options, 'unsafe_fixes': False})\n"
        "print(time.process_time() - start)\n"
    )
    path = work / "engine.py"
    path.write_text(big_file(classes))
    out = subprocess.run([sys.executable, "-c", script, str(path)], env=dict(os.environ, PYTHONPATH=str(src)),
                         capture_output=True, text=True, check=True, timeout=WAIT)
    return float(out.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--classes", type=int, default=150)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-big", action="store_true", help="first diagnostics only")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    src = args.src.resolve()
    with tempfile.TemporaryDirectory() as folder:
        work, pycache = Path(folder) / "work", Path(folder) / "pycache"
        work.mkdir()
        first_diagnostics(src, work, pycache, 1)  # writes the byte code cache
        results = {"src": str(src), **first_diagnostics(src, work, pycache, args.runs),
                   **startup_phases(src, work, pycache, args.runs)}
        if not args.skip_big:
            results.update(big_file_session(src, work, pycache, args.classes))
            results["engine_fix_cpu_s"] = engine_fix_time(src, work, args.classes)
    width = max(map(len, results))
    for name, value in results.items():
        print(f"{name:<{width}}  {value:.3f}" if isinstance(value, float) else f"{name:<{width}}  {value}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
