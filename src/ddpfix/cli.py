"""The ``ddpfix`` command: options -> rules and files -> results -> preview, question, writes.

Conventions follow Ruff and Black: findings as ``path:line:col: CODE [*] message`` on stdout so
editors link them; a one-line summary on stderr; exit 0 when nothing is left to fix, 1 when
something is (a fix not applied, or a finding with no safe rewrite), 2 for usage errors and files
that could not be checked.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace

import click

from ddpfix import __version__, report
from ddpfix.config import ConfigError, find_pyproject
from ddpfix.config import load as load_config
from ddpfix.budget import limit_options
from ddpfix.engine import allow_deep_trees
from ddpfix.sources import fix_source
from ddpfix.findings import FileResult, Finding, Problem
from ddpfix.runner import WorkerCrashed, check_files, covers_projects, discover, single_fixes
from ddpfix.rules import UnknownRule, all_rules, resolve
from ddpfix.rules import select_rules as select_registered
from ddpfix.rules.base import Rule
from ddpfix.writer import StaleFileError, remove_stale_temps, write_atomic

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
RUN_STARTED = time.time()  # temp files older than this run are a killed earlier run's (writer.remove_stale_temps)
LOG_MODES = ("auto", "rank-zero-only", "sync-dist")  # also in config.py, where the file is checked
PROGRESS_THRESHOLD = 200  # files


def select_rules(select: Sequence[str], ignore: Sequence[str]) -> list[type[Rule]]:
    """``rules.select_rules``, its error as a usage error of the option that named no rule."""
    try:
        return select_registered(select, ignore)
    except UnknownRule as err:
        raise click.BadParameter(str(err), param_hint=err.option) from err


def rules_table() -> str:
    rows = [("Code", "Name", "Fix", "Summary")]
    rows += [(r.code, r.name, "yes" if r.fixable else "no", r.summary) for r in all_rules()]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        f"{code:<{widths[0]}}  {name:<{widths[1]}}  {fix:<{widths[2]}}  {text}" for code, name, fix, text in rows
    )


class Output:
    """Where text goes, with colour decided once."""

    def __init__(self, color: bool | None, quiet: bool):
        self.color = color
        self.quiet = quiet

    def out(self, text: str = "", nl: bool = True) -> None:
        click.echo(text, nl=nl, color=self.color)

    def diff(self, data: bytes) -> None:
        """A diff goes out as the file's own bytes (so ``git apply`` takes it), coloured on a terminal."""
        if self.color if self.color is not None else sys.stdout.isatty():
            data = report.colour_diff(data)
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()

    def problems(self, problems: Sequence[Problem]) -> None:
        for problem in problems:
            self.err(report.problem_line(problem))

    def err(self, text: str) -> None:
        click.echo(text, err=True, color=self.color)

    def info(self, text: str) -> None:
        if not self.quiet:
            self.err(text)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, metavar="PATH...")
@click.option("--diff", "diff_only", is_flag=True, help="Print the diff of the fixes; write nothing.")
@click.option("--write", is_flag=True, help="Apply the fixes without asking.")
@click.option("--check", is_flag=True, help="List findings only: no diff, nothing written.")
@click.option("-i", "--interactive", is_flag=True, help="Ask about each fix on its own (needs a terminal).")
@click.option("--unsafe-fixes/--no-unsafe-fixes", "unsafe_fixes", default=None,
              help="Also apply (and show in diffs) the fixes marked [~]: plausible, but not proven to keep what "
              "correct code computes; review them. Default: safe fixes only ([*]).")
@click.option("--select", multiple=True, metavar="CODES", help="Only these rules (codes, code prefixes or names; comma-separated).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rules (codes, code prefixes or names; comma-separated).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching this gitignore-style pattern (repeatable).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=True, show_default=True, help="Skip files ignored by .gitignore.")
@click.option(
    "--log-mode", type=click.Choice(LOG_MODES), default=None,
    help="How DDP003 fixes a rank-gated self.log: auto (the default: rank_zero_only=True, or sync_dist=True "
    "out of the guard when a callback monitors the metric), or always one of the two.",
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Read [tool.ddpfix] from this pyproject.toml (default: the nearest one above the first PATH).")
@click.option("--show-suppressed", is_flag=True, help="Also list findings silenced by # noqa / # ddpfix: ignore.")
@click.option("--output-format", type=click.Choice(["text", "json", "sarif", "github"]), default="text", show_default=True,
              help="How findings are printed: text lines, one JSON array (with each fix's edits), a SARIF 2.1.0 log "
              "(for GitHub code scanning and SARIF viewers), or GitHub Actions annotations.")
@click.option("--stdin-filename", metavar="NAME", help="The file name to report for source read from stdin (PATH '-').")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: one per CPU; 1 runs in-process).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings and diffs, but no summary.")
@click.option("--color/--no-color", default=None, help="Colour the output (default: only on a terminal, unless NO_COLOR is set).")
@click.option("--list-rules", is_flag=True, help="List the rules and exit.")
@click.option("--explain", metavar="CODE", help="Print a rule's page (what, why, before/after) and exit.")
@click.option("--max-file-size", metavar="SIZE", default=None,
              help="Largest file parsed, e.g. 8MiB (default 4MiB); larger ones are reported (E902). See docs/limits.md.")
@click.option("--fix-time-budget", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS", default=None,
              help="Time each file's analysis and fixes may take (default 60); a file over it is left as it was (E903).")
@click.option("--fix-memory-budget", metavar="SIZE", default=None,
              help="Memory each file's analysis and fixes may take, e.g. 4GiB (default 2GiB); over it: E903.")
@click.version_option(__version__, "--version", prog_name="ddpfix")
def command(paths, diff_only, write, check, interactive, unsafe_fixes, select, ignore, exclude, respect_gitignore,
            log_mode, config_path, show_suppressed, output_format, stdin_filename, jobs, quiet, color, list_rules, explain,
            max_file_size, fix_time_budget, fix_memory_budget):
    """Find and fix the PyTorch Lightning DDP pitfalls in PATH... (files or folders; '-' reads stdin).

    By default ddpfix previews the fixes as a diff and, on a terminal, asks before writing.
    """
    if color is None and os.environ.get("NO_COLOR"):
        color = False  # https://no-color.org
    output = Output(color, quiet)
    if list_rules:
        output.out(rules_table())
        return EXIT_CLEAN
    if explain:
        matched = resolve(explain)
        if len(matched) != 1:
            raise click.BadParameter(f"no rule is called {explain!r} (see --list-rules)", param_hint="--explain")
        output.out(matched[0].page())
        return EXIT_CLEAN
    if sum((diff_only, write, check, interactive)) > 1:
        raise click.UsageError("choose one of --diff, --write, --check and --interactive")
    if not paths:
        raise click.UsageError("no PATH given: name files or folders to check, e.g. 'ddpfix .'")
    start = stdin_filename if "-" in paths and stdin_filename else (paths[0] if paths and paths[0] != "-" else ".")
    try:
        config = load_config(config_path if config_path else find_pyproject(start))
    except ConfigError as err:
        raise click.ClickException(str(err)) from err
    try:
        select_rules(config.select, config.ignore)  # an unknown code in the file is the file's error
    except click.BadParameter as err:
        raise click.ClickException(f"{config.path}: [tool.ddpfix] {err.message}") from err
    # A --select on the command line replaces the file's selection; ignores add up otherwise.
    rules = select_rules(select, ignore) if select else select_rules(config.select, [*config.ignore, *ignore])
    options = {"log_mode": log_mode or config.log_mode or "auto", "show_suppressed": show_suppressed,
               "unsafe_fixes": bool(config.unsafe_fixes if unsafe_fixes is None else unsafe_fixes)}
    try:
        options.update(limit_options(config, max_file_size, fix_time_budget, fix_memory_budget))
    except ValueError as err:
        raise click.UsageError(str(err)) from err
    exclude = [*(exclude or config.exclude), *config.extend_exclude]
    jobs = jobs or config.jobs
    mode = "diff" if diff_only else "write" if write else "check" if check else "interactive" if interactive else "preview"

    if "-" in paths:
        if len(paths) > 1:
            raise click.UsageError("'-' (stdin) cannot be combined with other paths")
        if interactive:
            raise click.UsageError("--interactive needs files, not stdin")
        return run_stdin(rules, mode, stdin_filename or "-", output, options)
    if stdin_filename:
        raise click.UsageError("--stdin-filename only applies with PATH '-'")
    if interactive and not _is_tty():
        raise click.UsageError("--interactive needs a terminal; use --diff to preview or --write to apply")

    files, problems, empty = discover(paths, exclude, respect_gitignore)
    # Facts from folders that hold whole projects are complete; from files named one by one (an
    # editor, pre-commit's staged files) they are partial, and decisions resting on them unsafe.
    whole = covers_projects(paths)
    for folder in empty:
        output.err(f"warning: {report.display_path(folder)}: no Python files or notebooks found")
    jobs = jobs or os.cpu_count() or 1
    # Findings of the files as they are unless fixes are shown or written: --check, and json/sarif/
    # github output without --write (their regions and edits refer to the file on disk).
    report_only = mode == "check" or (output_format != "text" and mode != "write")
    # A progress bar for long runs, on a terminal only, and never where stdout is machine-readable.
    show_progress = (
        len(files) > PROGRESS_THRESHOLD and not quiet and output_format == "text" and sys.stderr.isatty()
    )
    if show_progress:
        with click.progressbar(length=len(files), label="Checking", file=sys.stderr) as bar:
            facts, results = check_files(files, rules, jobs, options, progress=bar.update, fix=not report_only, whole=whole)
    else:
        facts, results = check_files(files, rules, jobs, options, fix=not report_only, whole=whole)
    problems += [problem for result in results for problem in result.problems]
    output.problems(problems)

    def done(applied: bool) -> int:
        return finish(results, problems, output, applied=applied, checked=len(files), report_only=report_only,
                      unsafe_fixes=options["unsafe_fixes"])

    def write_all() -> None:
        nonlocal results
        results, failed = write_results(results)
        output.problems(failed)
        problems.extend(failed)

    if output_format != "text":
        if interactive or diff_only:
            raise click.UsageError(f"--output-format {output_format} goes with --check or --write")
        if write:
            write_all()
        print_machine_readable(output_format, results, problems, rules, facts, options, output, written=write, jobs=jobs)
        return done(applied=write)
    if mode == "interactive":
        results = review_interactively(results, rules, facts, problems, output, options)
        write_all()
        return done(applied=True)
    changed = [result for result in results if result.changed]
    if mode == "diff":
        for result in results:
            for finding in result.findings:
                if not finding.fixed:
                    output.err(report.finding_line(finding))
        for result in changed:
            output.diff(report.unified_diff(result.path, result.original, result.fixed))
        return done(applied=False)
    if mode == "write":
        write_all()
    for result in results:
        for finding in result.findings:
            output.out(report.finding_line(finding, written=mode == "write"))
    if mode in ("write", "check"):
        return done(applied=mode == "write")

    # preview: the diff, then the question on a terminal
    for result in changed:
        output.diff(report.unified_diff(result.path, result.original, result.fixed))
    fixes = sum(f.fixed for r in changed for f in r.findings)
    if changed and _is_tty():
        question = f"Apply {report.plural(fixes, 'fix', 'fixes')} to {report.plural(len(changed), 'file')}?"
        if click.confirm(question, default=False):
            write_all()
            return done(applied=True)
    return done(applied=False)


def print_machine_readable(output_format, results, problems, rules, facts, options, output: Output, written: bool,
                           jobs: int = 1) -> None:
    """Findings (and the files' problems) as one JSON array, a SARIF log, or GitHub annotations, on stdout."""
    # Loaded here, for machine-readable output only: a text report (the common ``--check``) never
    # pays for them at start-up.
    import json

    from ddpfix import sarif

    if output_format == "github":
        for problem in problems:
            output.out(report.github_line(problem=problem))
        for result in results:
            for finding in result.findings:
                output.out(report.github_line(finding))
        return
    edits = single_fix_edits(results, rules, facts, options, jobs)
    if output_format == "sarif":
        log = sarif.sarif_log(results, problems, rules, edits, written=written)
        output.out(json.dumps(log, indent=2, ensure_ascii=False))
        return
    records = [report.problem_record(p) for p in problems]
    for result in results:
        for finding in result.findings:
            edit = edits.get(finding)
            records.append(report.finding_record(replace(finding, fixed=finding.fixed and written), [edit] if edit else []))
    output.out(json.dumps(records, indent=2, ensure_ascii=False))


def single_fix_edits(results, rules, facts, options, jobs: int = 1) -> dict[Finding, dict]:
    """Each fixable finding's fix on its own, as one edit of the file as it was read (see
    ``report.text_edit``): what an editor or a SARIF viewer would apply. Findings without a fix,
    or whose fix changes nothing by itself, have no entry."""
    outputs = single_fixes(results, rules, facts, options, jobs)
    edits: dict[Finding, dict] = {}
    for result in results:
        before = None
        for finding in result.findings:
            if finding in outputs:
                before = before if before is not None else report.source_text(result.original)
                edit = report.text_edit(before, report.source_text(outputs[finding]))
                if edit:
                    edits[finding] = edit
    return edits


def _is_tty() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def write_results(results: list[FileResult]) -> tuple[list[FileResult], list[Problem]]:
    """Write every changed file. A file that cannot be written is a problem, and its fixes count as not applied.

    Each folder written to is first rid of the temp files a killed earlier run left there.
    """
    kept, failed = [], []
    cleaned: set[str] = set()
    for result in results:
        if result.changed:
            folder = os.path.dirname(os.path.realpath(result.path))
            if folder not in cleaned:
                cleaned.add(folder)
                remove_stale_temps(folder, RUN_STARTED)
            try:
                write_atomic(result.path, result.fixed, expected=result.original)
            except (OSError, StaleFileError) as err:
                message = str(err) if isinstance(err, StaleFileError) else f"cannot write: {err.strerror or err}"
                failed.append(Problem(result.path, "E902", message))
                result = FileResult(result.path, result.original, None, [_not_written(f) for f in result.findings])
        kept.append(result)
    return kept, failed


def _not_written(finding: Finding) -> Finding:
    return replace(finding, fixed=False)


def finish(results: list[FileResult], problems: list[Problem], output: Output, *, applied: bool, checked: int,
           report_only: bool = False, unsafe_fixes: bool = False) -> int:
    """The summary line and the exit status. ``report_only``: the results hold findings but no fixes
    (``--check`` applies none): what would be fixed is what is fixable with the fixes allowed
    (safe ones, and unsafe ones with ``unsafe_fixes``); the unsafe fixes left out are counted apart."""
    changed = [r for r in results if r.changed]
    problems = [p for p in problems if p.level == "error"]  # notes are said, not failed on
    findings = [f for r in results for f in r.findings if not f.suppressed]
    allowed = [f for f in findings if f.fixable and (f.safe or unsafe_fixes)]
    hidden = sum(f.unsafe and not f.fixed for f in findings) if not unsafe_fixes else 0
    if report_only:
        changed = [r for r in results if any(f.fixable and not f.suppressed and (f.safe or unsafe_fixes)
                                             for f in r.findings)]
        fixes, pending = len(allowed), 0
    else:
        fixes = sum(f.fixed for r in changed for f in r.findings)
        pending = sum(not f.fixed for f in allowed)
    manual = sum(not f.fixable for f in findings)
    output.info(report.summary(fixes=fixes, files=len(changed), applied=applied, pending=pending, manual=manual,
                               errors=len({p.path for p in problems}), checked=checked, hidden=hidden))
    if problems:
        return EXIT_ERROR
    if manual or pending or hidden or (fixes and not applied):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def run_stdin(rules: Sequence[type[Rule]], mode: str, name: str, output: Output, options: dict) -> int:
    """Editor-buffer mode: source on stdin, fixed source (or diff) on stdout, findings on stderr."""
    data = sys.stdin.buffer.read()
    result = fix_source(name, data, rules, options=options, fix=mode != "check")
    output.problems(result.problems)
    findings_to = output.out if mode == "check" else output.err
    for finding in result.findings:
        findings_to(report.finding_line(finding, written=mode in ("write", "preview")))
    if mode == "diff":
        if result.changed:
            output.diff(report.unified_diff(name, result.original, result.fixed))
    elif mode != "check":
        # Always echo a whole buffer: on a problem the original, so an editor never loses text.
        sys.stdout.buffer.write(result.output)
        sys.stdout.buffer.flush()
    applied = mode in ("write", "preview")
    return finish([result], result.problems, output, applied=applied, checked=1, report_only=mode == "check",
                  unsafe_fixes=bool(options.get("unsafe_fixes")))


def review_interactively(results, rules, facts, problems, output, options):
    """Ask about each fix on its own; write each file with exactly the accepted fixes.

    Rules run in their fixed order; for each, its fixes are offered one by one against the file
    as the earlier accepted fixes left it, and the engine re-applies just the accepted ones (and
    verifies the result), so a file is never half-edited. Unsafe fixes are offered too, marked
    ``[~]`` with what was not proven (a person decides); "all" takes only the safe ones unless
    ``--unsafe-fixes`` is on.
    """
    reviewed: list[FileResult] = []
    quit_all = False
    take_unsafe = bool(options.get("unsafe_fixes"))
    offer = {**options, "unsafe_fixes": True}
    for result in results:
        offered = any(f.fixable and not f.suppressed for f in result.findings)
        if quit_all or not offered or any(p.level == "error" for p in result.problems):
            result = _without_fixes(result)
            for finding in result.findings:
                output.out(report.finding_line(finding))
            reviewed.append(result)
            continue
        current = result.original
        accepted_findings = []
        declined = []
        accept_rest = False
        for rule in rules:
            if quit_all:
                break
            proposal = fix_source(result.path, current, [rule], facts, options=offer)
            accepted = []
            for finding in proposal.findings:
                if not finding.fixed:
                    output.out(report.finding_line(finding))
                    declined.append(finding)
                    continue
                if accept_rest:
                    if finding.safe or take_unsafe:
                        accepted.append(finding)
                    else:
                        output.out(report.finding_line(finding))
                        declined.append(_not_written(finding))
                    continue
                single = fix_source(result.path, current, [rule], facts, only={finding.key}, options=options)
                output.out(report.finding_line(finding))
                if single.changed:
                    output.diff(report.unified_diff(result.path, current, single.fixed))
                answer = _ask(unsafe=finding.unsafe)
                if answer == "y":
                    accepted.append(finding)
                elif answer == "a":
                    accepted.append(finding)
                    accept_rest = True
                elif answer == "q":
                    declined.append(_not_written(finding))
                    quit_all = True
                    break
                else:
                    declined.append(_not_written(finding))
            if accepted:
                applied = fix_source(result.path, current, [rule], facts, only={f.key for f in accepted}, options=options)
                if any(p.level == "error" for p in applied.problems):
                    output.problems(applied.problems)
                    problems.extend(applied.problems)
                    break
                current = applied.output
                accepted_findings += [f for f in applied.findings if f.fixed]
        final = FileResult(result.path, result.original, current if current != result.original else None,
                           accepted_findings + [_not_written(f) for f in declined])
        reviewed.append(final)
    return reviewed


def _without_fixes(result: FileResult) -> FileResult:
    return FileResult(result.path, result.original, None, [_not_written(f) for f in result.findings], result.problems)


def _ask(unsafe: bool = False) -> str:
    question = "Apply this unsafe fix (review it)?" if unsafe else "Apply this fix?"
    while True:
        try:
            answer = input(f"{question} [y]es / [n]o / [a]ll in this file / [q]uit: ").strip().lower()
        except EOFError:
            return "q"
        if answer[:1] in ("y", "n", "a", "q"):
            return answer[:1]
        click.echo("Please answer y, n, a or q.")


def run_language_server(args: list[str]) -> int:
    """``ddpfix lsp``: pygls is an optional extra, so say how to get it rather than fail on import."""
    try:
        from ddpfix import lsp
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in ("pygls", "lsprotocol"):
            raise
        click.echo("error: the language server needs pygls: pip install 'ddpfix[lsp]'", err=True)
        return EXIT_ERROR
    return lsp.main(args)


def main() -> None:
    allow_deep_trees()
    # Exactly ``lsp`` as the first argument starts the language server; a folder named lsp is
    # checked as ``ddpfix ./lsp``.
    if sys.argv[1:2] == ["lsp"]:
        sys.exit(run_language_server(sys.argv[2:]))
    try:
        code = command.main(standalone_mode=False)
    except click.exceptions.Exit as exit_:
        sys.exit(exit_.exit_code)
    except click.ClickException as err:
        err.show()
        sys.exit(EXIT_ERROR)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(EXIT_FINDINGS)
    except WorkerCrashed as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        click.echo("Interrupted: files already written are complete; the others are untouched.", err=True)
        sys.exit(130)
    sys.exit(code or 0)
