"""The ``ddpfix`` command: options -> rules and files -> results -> preview, question, writes.

Conventions follow Ruff and Black: findings as ``path:line:col: CODE [*] message`` on stdout so
editors link them; a one-line summary on stderr; exit 0 when nothing is left to fix, 1 when
something is (a fix not applied, or a finding with no safe rewrite), 2 for usage errors and files
that could not be checked.
"""

from __future__ import annotations

from ddpfix.interrupted_exit import quiet_while_loading

# First, before the modules below take their few tenths of a second to load: a Ctrl-C meanwhile
# ends the run with one line and status 130, not a traceback (docs/interrupts.md).
quiet_while_loading()

import gc

# What loads from here on (modules, classes, functions: ~27,000 objects the collector tracks) lives
# until the process ends, so a collection while loading frees nothing yet walks all of it. Hence the
# run's own thresholds (``engine.GC_THRESHOLDS``, which ``main`` sets again) from now on, and ``main``
# freezes what loaded: no later collection walks it, the one at exit included. ~12 ms of a one-file
# ``--check`` (bench/startup.py).
gc.set_threshold(50_000, 20, 10)

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import click

from ddpfix import __version__, interrupts, report, spellings
from ddpfix.budget import limit_options
from ddpfix.cli_help import EPILOG, HELP_WIDTH
from ddpfix.config import Config, ConfigError
from ddpfix.engine import set_up_for_trees
from ddpfix.sources import fix_source
from ddpfix.findings import FileResult, Finding, Problem
from ddpfix.progress import Progress
from ddpfix.project import buffer_facts, project_view, settings_report
from ddpfix.runner import RunGroup, WorkerCrashed, check_groups, find_files, named_exclusion, single_fixes
from ddpfix.settings import Flags, Resolver
from ddpfix.rules import UnknownRule, all_rules, resolve
from ddpfix.rules import select_rules as select_registered
from ddpfix.rules.base import Rule
from ddpfix.syntax import with_syntax_checked
from ddpfix.writer import ResultWriter, files_written

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
RUN_STARTED = time.time()  # temp files older than this run are a killed earlier run's (writer.remove_stale_temps)
LOG_MODES = ("auto", "rank-zero-only", "sync-dist")  # also in config.py, where the file is checked
PROGRESS_THRESHOLD = 200  # files


def select_rules(select: Sequence[str], ignore: Sequence[str], extend: Sequence[str] = ()) -> list[type[Rule]]:
    """``rules.select_rules``, its error as a usage error of the option that named no rule."""
    try:
        return select_registered(select, ignore, extend)
    except UnknownRule as err:
        raise click.BadParameter(str(err), param_hint=err.option) from err


def rules_table() -> str:
    rows = [("Code", "Name", "Fix", "Summary")]
    rows += [(r.code, r.name, "yes" if r.fixable else "no", ("(preview) " if r.preview else "") + r.summary)
             for r in all_rules()]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        f"{code:<{widths[0]}}  {name:<{widths[1]}}  {fix:<{widths[2]}}  {text}" for code, name, fix, text in rows
    )


class Output:
    """Where text goes, with colour decided once. ``verbose``: each finding line is followed by its
    explanation (``report.explanation``). Between ``start_paging`` and ``end_paging`` what goes to
    stdout is gathered, then shown through the pager."""

    def __init__(self, color: bool | None, quiet: bool, verbose: bool = False):
        self.color = color
        self.quiet = quiet
        self.verbose = verbose
        self._paged: list[bytes] | None = None

    def out(self, text: str = "", nl: bool = True) -> None:
        if self._paged is not None:
            styled = self.color if self.color is not None else sys.stdout.isatty()
            self._paged.append(((text if styled else click.unstyle(text)) + ("\n" if nl else "")).encode())
            return
        click.echo(text, nl=nl, color=self.color)

    def finding(self, finding: Finding, written: bool = False, err: bool = False) -> None:
        """A finding line (on stderr with ``err``), and with ``verbose`` its explanation under it."""
        text = report.finding_line(finding, written)
        if self.verbose:
            more = report.explanation(finding, written)
            text += "\n" + more if more else ""
        if err:
            self.err(text)
        else:
            self.out(text)

    def diff(self, data: bytes) -> None:
        """A diff goes out as the file's own bytes (so ``git apply`` takes it), coloured on a terminal."""
        if self.color if self.color is not None else sys.stdout.isatty():
            data = report.colour_diff(data)
        if self._paged is not None:
            self._paged.append(data)
            return
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()

    def start_paging(self) -> None:
        self._paged = []

    def end_paging(self) -> None:
        """Show what was gathered through the pager (``ddpfix.pager``)."""
        from ddpfix import pager

        gathered, self._paged = b"".join(self._paged or ()), None
        if gathered:
            pager.page(gathered)

    def problems(self, problems: Sequence[Problem]) -> None:
        for problem in problems:
            self.err(report.problem_line(problem))

    def err(self, text: str) -> None:
        click.echo(text, err=True, color=self.color)

    def info(self, text: str) -> None:
        if not self.quiet:
            self.err(text)


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": HELP_WIDTH}, epilog=EPILOG)
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--diff", "diff_only", is_flag=True, help="Print the diff of the fixes; write nothing.")
@click.option("--write", is_flag=True, help="Apply the fixes without asking.")
@click.option("--check", is_flag=True, help="List findings only: no diff, nothing written.")
@click.option("-i", "--interactive", is_flag=True, help="Ask about each fix on its own (needs a terminal).")
@click.option("--unsafe-fixes/--no-unsafe-fixes", "unsafe_fixes", default=None,
              help="Also apply (and show in diffs) the fixes marked [~]: plausible, but not proven to keep what "
              "correct code computes; review them. Default: safe fixes only ([*]).")
@click.option("--preview/--no-preview", "preview", default=None,
              help="Also run the preview rules (below their precision target on real code; see --list-rules) "
              "where ALL, a prefix or the default selects rules. An exact code selects one without it.")
@click.option("--select", multiple=True, metavar="CODES", help="Only these rules (codes, code prefixes or names; comma-separated).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rules (codes, code prefixes or names; comma-separated).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching this gitignore-style pattern (repeatable).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=True, show_default=True, help="Skip files ignored by .gitignore.")
@click.option(
    "--log-mode", type=click.Choice(LOG_MODES), default=None,
    help="How DDP003 fixes a rank-gated self.log: auto (the default: rank_zero_only=True, or sync_dist=True "
    "out of the guard when a callback monitors the metric), or always one of the two.",
)
@click.option("--config", "config_entries", multiple=True, metavar="FILE | KEY=VALUE",
              help="Read [tool.ddpfix] from FILE for every file (default: each file's nearest pyproject.toml "
                   "with one); or, as Ruff's, override one setting: --config 'ignore = [\"DDP014\"]' (repeatable).")
@click.option("--show-suppressed", is_flag=True, help="Also list findings silenced by # noqa / # ddpfix: ignore.")
@click.option("--output-format", type=click.Choice(["text", "json", "json-lines", "sarif", "github", "gitlab"]),
              default="text", show_default=True,
              help="How findings are printed: text lines, one JSON array (with each fix's edits), the same records "
              "one JSON object a line (json-lines), a SARIF 2.1.0 log (for GitHub code scanning and SARIF viewers), "
              "GitHub Actions annotations, or a GitLab Code Quality report.")
@click.option("--stdin-filename", metavar="NAME", help="The file name to report for source read from stdin (PATH '-', or no PATH).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: one per CPU; 1 runs in-process).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings and diffs, but no summary.")
@click.option("--color/--no-color", default=None, help="Colour the output (default: only on a terminal, unless NO_COLOR is set).")
@click.option("--list-rules", is_flag=True, help="List the rules and exit.")
@click.option("--explain", metavar="CODE", help="Print a rule's page (what, why, before/after) and exit.")
@click.option("--extend-select", multiple=True, metavar="CODES",
              help="Add these rules to the selection (codes, code prefixes or names; comma-separated).")
@click.option("--statistics", is_flag=True,
              help="Count the findings left per rule instead of listing them (a --check unless --write).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are left (errors still exit 2).")
@click.option("--add-noqa", is_flag=True, help="Silence each finding left with a '# noqa: CODE' comment.")
@click.option("-v", "--verbose", is_flag=True, help="Explain each finding under its line: why it breaks under DDP, "
              "what to do, and why a fix is unsafe or not offered.")
@click.option("--show-fixes", is_flag=True, help="With --write or --diff, also list the findings fixed (marked "
              "[fixed] when written); by default only what is left is listed.")
@click.option("--no-pager", is_flag=True, help="Print the preview straight to the terminal instead of through "
              "$DDPFIX_PAGER / $PAGER / less.")
@click.option("--force-exclude", is_flag=True, help="Apply the exclude settings and --exclude to paths named explicitly "
              "too (the pre-commit hooks pass it): by default a path named is checked even if excluded.")
@click.option("--notebook-diff", type=click.Choice(["cells", "json"]), default="cells", show_default=True,
              help="How a notebook's fixes are shown: per code cell, or as a diff of the .ipynb file's JSON "
                   "(which git apply takes).")
@click.option("--watch", is_flag=True, help="Check again whenever a Python file or notebook under PATH changes "
              "(as Ruff's; Ctrl-C stops it).")
@click.option("--show-files", is_flag=True, help="List the files that would be checked, then exit.")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="Exit 1 when a fix was written, even if nothing is left (as Ruff's flag).")
@click.option("--show-settings", is_flag=True, help="Print the settings that apply to each PATH and where they come "
              "from, then exit.")
@click.option("--max-file-size", metavar="SIZE", default=None,
              help="Largest file parsed, e.g. 8MiB (default 4MiB); larger ones are reported (E902). See docs/limits.md.")
@click.option("--fix-time-budget", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS", default=None,
              help="Time each file's analysis and fixes may take (default 60); a file over it is left as it was (E903).")
@click.option("--fix-memory-budget", metavar="SIZE", default=None,
              help="Memory each file's analysis and fixes may take, e.g. 4GiB (default 2GiB); over it: E903.")
@click.version_option(__version__, "--version", prog_name="ddpfix")
def command(paths, diff_only, write, check, interactive, unsafe_fixes, preview, select, ignore, exclude, respect_gitignore,
            log_mode, config_entries, show_suppressed, output_format, stdin_filename, jobs, quiet, color, list_rules, explain,
            extend_select, statistics, exit_zero, add_noqa,
            verbose, show_fixes, no_pager,
            force_exclude, notebook_diff, watch, show_files, exit_non_zero_on_fix, show_settings,
            max_file_size, fix_time_budget, fix_memory_budget):
    """Find and fix the PyTorch Lightning DDP pitfalls in PATH... (files or folders; default '.';
    '-' reads stdin).

    By default ddpfix previews the fixes as a diff and, on a terminal, asks before writing.
    """
    if color is None and os.environ.get("NO_COLOR"):
        color = False  # https://no-color.org
    output = Output(color, quiet, verbose)
    report.NOTEBOOK_DIFF["style"] = notebook_diff
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
    if not paths:  # as Ruff and Black: the current folder, or stdin when a name is given for it
        paths = ("-",) if stdin_filename else (".",)
    start = stdin_filename if "-" in paths and stdin_filename else (paths[0] if paths and paths[0] != "-" else ".")
    select_rules(select, ignore, extend_select)  # the flags' own errors are usage errors
    try:
        limit_options(Config(), max_file_size, fix_time_budget, fix_memory_budget)
    except ValueError as err:
        raise click.UsageError(str(err)) from err
    # Each file is checked with the settings of its nearest [tool.ddpfix] (settings.py); the first
    # PATH's settings give the run's ``jobs`` and the rules of stdin.
    config_path, overrides = split_config_entries(config_entries)
    resolver = Resolver(Flags(tuple(select), tuple(ignore), tuple(exclude), log_mode, unsafe_fixes, show_suppressed,
                              config_path, tuple(extend_select), max_file_size, fix_time_budget, fix_memory_budget,
                              preview=preview, overrides=overrides))
    try:
        settings = resolver.for_path(start)
        if show_settings:
            for line in settings_report([start] if "-" in paths else paths, resolver):
                output.out(line)
            return EXIT_CLEAN
    except ConfigError as err:
        raise click.ClickException(str(err)) from err
    if show_files:
        if "-" in paths:
            raise click.UsageError("--show-files needs files, not stdin")
        try:
            for path in find_files(paths, resolver, respect_gitignore, force_exclude).files:
                output.out(path)
        except ConfigError as err:
            raise click.ClickException(str(err)) from err
        return EXIT_CLEAN
    rules, options = list(settings.rules), dict(settings.options)
    jobs = jobs or settings.config.jobs
    mode = "diff" if diff_only else "write" if write else "check" if check else "interactive" if interactive else "preview"
    mode = effective_mode(mode, statistics, add_noqa, output_format)

    if "-" in paths:
        if len(paths) > 1:
            raise click.UsageError("'-' (stdin) cannot be combined with other paths")
        if interactive:
            raise click.UsageError("--interactive needs files, not stdin")
        if add_noqa:
            raise click.UsageError("--add-noqa needs files, not stdin")
        facts_for = None
        if stdin_filename and force_exclude and named_exclusion(stdin_filename, False, resolver):
            rules = []  # excluded: the buffer comes back as it is, with nothing to say (as Ruff)
        if not stdin_filename and any(rule.uses_facts for rule in rules):
            # The one truly partial view: said once here, not per finding.
            output.info("note: stdin without --stdin-filename: the rest of the project is not read, so fixes "
                        "that rest on it (callbacks, default devices, pins elsewhere) stay unsafe")
        if stdin_filename and any(rule.uses_facts for rule in rules):
            # The buffer stands for that file: the facts come from its project, with the buffer as its content.
            def facts_for(data: bytes):
                try:
                    return buffer_facts(stdin_filename, data, resolver, respect_gitignore, jobs or 1)
                except ConfigError as err:
                    raise click.ClickException(str(err)) from err
        return run_stdin(rules, mode, stdin_filename or "-", output, options, facts_for,
                         statistics=statistics, exit_zero=exit_zero)
    if stdin_filename:
        raise click.UsageError("--stdin-filename only applies with PATH '-'")
    if interactive and not _is_tty():
        raise click.UsageError("--interactive needs a terminal; use --diff to preview or --write to apply")

    jobs = jobs or os.cpu_count() or 1
    try:
        found = find_files(paths, resolver, respect_gitignore, force_exclude)
        groups = [RunGroup(group, s.rules, s.options) for s, group in resolver.groups(found.files)]
        # The facts come from the whole project of each path named, whatever files are named
        # (pre-commit's staged files, one file): project.py.
        uses_facts = any(rule.uses_facts for group in groups for rule in group.rules)
        view = project_view(paths, found.real, resolver, respect_gitignore) if uses_facts else None
    except ConfigError as err:
        raise click.ClickException(str(err)) from err
    files, problems, empty = found.files, found.problems, found.empty
    groups = groups or [RunGroup([], rules, options)]
    whole, facts_from = (view.whole, view.others) if view else (False, ())
    for line in [*found.notes, *([f"note: {view.note}"] if view and view.note else [])]:
        output.err(line) if line.startswith("warning") else output.info(line)
    for folder in empty:
        output.err(f"warning: {report.display_path(folder)}: no Python files or notebooks found")
    # Findings of the files as they are unless fixes are shown or written: --check, and json/sarif/
    # github output without --write (their regions and edits refer to the file on disk).
    report_only = mode == "check" or (output_format != "text" and mode != "write")
    # Progress on a terminal only, and never where stdout is machine-readable: a bar for long runs,
    # else only the name of a file that keeps the run waiting.
    progress = None
    if not quiet and output_format == "text" and sys.stderr.isatty():
        progress = Progress(sys.stderr, bar=len(files) > PROGRESS_THRESHOLD,
                            fix_label="Checking" if report_only else "Fixing", jobs=jobs)
    # --write writes each file as soon as its result is final: a run stopped part-way keeps those.
    writes = ResultWriter(RUN_STARTED) if mode == "write" else None
    named = {os.path.normpath(path) for path in paths if os.path.isfile(path)}  # always syntax-checked
    try:
        facts, results = check_groups(groups, jobs, progress, not report_only, whole, facts_from,
                                      named=named.intersection(files), on_result=writes)
    finally:
        if progress:
            progress.close()
    problems += [problem for result in results for problem in result.problems]
    output.problems(problems)
    if writes:
        output.problems(writes.failed)
        problems.extend(writes.failed)

    unsafe_paths = {path for group in groups if group.options["unsafe_fixes"] for path in group.paths}

    def done(applied: bool) -> int:
        return finish(results, problems, output, applied=applied, checked=len(files), report_only=report_only,
                      unsafe_fixes=unsafe_paths.__contains__, exit_zero=exit_zero, unsafe_flag=unsafe_fixes is True,
                      exit_on_fix=exit_non_zero_on_fix)

    def write_all() -> None:
        nonlocal results
        results, failed = write_results(results)
        output.problems(failed)
        problems.extend(failed)

    if add_noqa:
        return add_noqa_comments(results, problems, rules, facts, options, output, checked=len(files), exit_zero=exit_zero,
                                 groups=groups)
    if statistics:  # with --write, the files were written as their results came in
        print_statistics(results, output_format, output)
        return done(applied=write)
    if output_format != "text":
        if interactive or diff_only:
            raise click.UsageError(f"--output-format {output_format} goes with --check or --write")
        print_machine_readable(output_format, results, problems, rules, facts, options, output, written=write, jobs=jobs,
                               groups=groups)
        return done(applied=write)
    if mode == "interactive":
        results = review_interactively(results, rules, facts, problems, output, options, groups=groups)
        write_all()
        return done(applied=True)
    changed = [result for result in results if result.changed]
    if mode == "diff":
        for result in results:
            for finding in result.findings:
                if not finding.fixed or show_fixes:
                    output.finding(finding, err=True)
        for result in changed:
            output.diff(report.file_diff(result.path, result.original, result.fixed))
        return done(applied=False)
    # The preview (findings, then the diff) goes through a pager on a terminal, as git's diffs do.
    paging = mode == "preview" and not no_pager and sys.stdout.isatty()
    if paging:
        output.start_paging()
    for result in results:
        for finding in result.findings:
            # --write lists what is left; the fixes written only when asked (as Ruff's --fix).
            if mode != "write" or not finding.fixed or show_fixes:
                output.finding(finding, written=mode == "write")
    if mode in ("write", "check"):
        return done(applied=mode == "write")

    # preview: the diff, then the question on a terminal
    for result in changed:
        output.diff(report.file_diff(result.path, result.original, result.fixed))
    if paging:
        output.end_paging()
    fixes = sum(f.fixed for r in changed for f in r.findings)
    if changed and _is_tty():
        hidden = hidden_fixes(results, unsafe_paths.__contains__)
        if click.confirm(report.preview_question(fixes, len(changed), hidden), default=False):
            write_all()
            return done(applied=True)
    return done(applied=False)


def print_machine_readable(output_format, results, problems, rules, facts, options, output: Output, written: bool,
                           jobs: int = 1, groups: Sequence[RunGroup] = ()) -> None:
    """Findings (and the files' problems) as JSON records, a SARIF log, GitHub annotations or a GitLab
    Code Quality report, on stdout."""
    # Loaded here, for machine-readable output only: a text report (the common ``--check``) never
    # pays for them at start-up.
    import json

    if output_format in ("github", "gitlab"):
        from ddpfix import ci_output

        for line in ci_output.lines(output_format, results, problems, written=written):
            output.out(line)
        return
    edits: dict[Finding, dict] = {}
    for group in groups or [RunGroup([r.path for r in results], rules, options)]:
        members = set(group.paths)
        edits.update(single_fix_edits([r for r in results if r.path in members], group.rules, facts, group.options, jobs))
    rules = sorted({rule for group in groups for rule in group.rules} or rules, key=lambda rule: rule.code)
    if output_format == "sarif":
        from ddpfix import sarif

        log = sarif.sarif_log(results, problems, rules, edits, written=written)
        output.out(json.dumps(log, indent=2, ensure_ascii=False))
        return
    records = [report.problem_record(p) for p in problems]
    for result in results:
        for finding in result.findings:
            edit = edits.get(finding)
            records.append(report.finding_record(replace(finding, fixed=finding.fixed and written), [edit] if edit else []))
    if output_format == "json-lines":  # the json format's records, one a line, for line-by-line readers
        for record in records:
            output.out(json.dumps(record, ensure_ascii=False))
        return
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


def effective_mode(mode: str, statistics: bool, add_noqa: bool, output_format: str) -> str:
    """The mode once --statistics and --add-noqa are taken into account: both read the files as they
    are (a --check), --statistics also after --write."""
    if add_noqa:
        if mode != "preview" or statistics:
            raise click.UsageError("--add-noqa goes alone: not with --diff, --write, --check, -i or --statistics")
        if output_format != "text":
            raise click.UsageError("--add-noqa writes comments; it has no --output-format")
        return "check"
    if statistics:
        if mode in ("diff", "interactive"):
            raise click.UsageError("--statistics goes with --check (its default) or --write")
        if output_format not in ("text", "json"):
            raise click.UsageError("--statistics prints text or json (--output-format)")
        return "check" if mode == "preview" else mode
    return mode


def print_statistics(results: list[FileResult], output_format: str, output: Output) -> None:
    """The findings left, counted per rule (``statistics``), on stdout: a table, or one JSON array."""
    from ddpfix import statistics

    rows = statistics.counts(results)
    if output_format == "json":
        import json

        output.out(json.dumps(statistics.records(rows), indent=2))
    elif rows:
        output.out(statistics.table(rows))


def add_noqa_comments(results, problems, rules, facts, options, output: Output, *, checked: int,
                      exit_zero: bool, groups: Sequence[RunGroup] = ()) -> int:
    """``--add-noqa``: write a ``# noqa`` for every finding left (``add_noqa``), each file with its own
    settings (``groups``), and say what is left."""
    from ddpfix.add_noqa import add_noqa

    settings_of = {path: (group.rules, group.options) for group in groups for path in group.paths}
    added = []
    for result in results:
        own_rules, own_options = settings_of.get(result.path, (rules, options))
        added.append(add_noqa(result, own_rules, facts, own_options))
    notes = [problem for item in added for problem in item.problems]
    output.problems(notes)
    problems = [*problems, *notes]
    written, failed = write_results([item.result for item in added])
    output.problems(failed)
    problems += failed
    left = [finding for result in written for finding in result.findings]  # each named by a note or a problem
    directives = sum(item.directives for item, result in zip(added, written) if result.changed)
    files = sum(result.changed for result in written)
    errors = len({p.path for p in problems if p.level == "error"})
    message = f"Added {report.plural(directives, 'noqa directive')} to {report.plural(files, 'file')}"
    message += f" ({report.plural(checked, 'file')} checked)."
    if left:
        message += f" {report.plural(len(left), 'finding')} could not be silenced (see the notes above)."
    if errors:
        message += f" {report.plural(errors, 'file')} had errors (see above)."
    output.info(message)
    return exit_status(EXIT_ERROR if errors else EXIT_FINDINGS if left else EXIT_CLEAN, exit_zero)


def exit_status(status: int, exit_zero: bool) -> int:
    """``--exit-zero`` (as Ruff's): findings left do not fail the run; errors still do (2)."""
    return EXIT_CLEAN if exit_zero and status == EXIT_FINDINGS else status


def _is_tty() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def write_results(results: list[FileResult]) -> tuple[list[FileResult], list[Problem]]:
    """Write every changed file (after the preview's question, or ``-i``'s review; ``--write``
    writes each as it comes, ``check_files``'s ``on_result``). A file that cannot be written is a
    problem, and its fixes count as not applied (``writer.ResultWriter``)."""
    writes = ResultWriter(RUN_STARTED)
    return [writes(result) for result in results], writes.failed


def _not_written(finding: Finding) -> Finding:
    return replace(finding, fixed=False)


def finish(results: list[FileResult], problems: list[Problem], output: Output, *, applied: bool, checked: int,
           report_only: bool = False, unsafe_fixes: bool = False, exit_zero: bool = False, unsafe_flag: bool = False,
           exit_on_fix: bool = False) -> int:
    """The summary line and the exit status. ``report_only``: the results hold findings but no fixes
    (``--check`` applies none): what would be fixed is what is fixable with the fixes allowed
    (safe ones, and unsafe ones with ``unsafe_fixes``); the unsafe fixes left out are counted apart."""
    changed = [r for r in results if r.changed]
    problems = [p for p in problems if p.level == "error"]  # notes are said, not failed on
    findings = [f for r in results for f in r.findings if not f.suppressed]
    unsafe_on = _unsafe_on(unsafe_fixes)
    allowed = [f for f in findings if f.fixable and (f.safe or unsafe_on(f.path))]
    hidden = hidden_fixes(results, unsafe_fixes)
    if report_only:
        changed = [r for r in results if any(f.fixable and not f.suppressed and (f.safe or unsafe_on(f.path))
                                             for f in r.findings)]
        fixes, pending = len(allowed), 0
    else:
        fixes = sum(f.fixed for r in changed for f in r.findings)
        pending = sum(not f.fixed for f in allowed)
    manual = sum(not f.fixable for f in findings)
    # What was shown included unsafe fixes because the flag asked for them: the command that
    # applies it must ask again (a setting in the config would apply them with --write alone).
    shown_unsafe = unsafe_flag and any(not f.safe for f in allowed)
    output.info(report.summary(fixes=fixes, files=len(changed), applied=applied, pending=pending, manual=manual,
                               errors=len({p.path for p in problems}), checked=checked, hidden=hidden,
                               apply_with="--write --unsafe-fixes" if shown_unsafe else "--write"))
    if problems:
        return EXIT_ERROR
    if exit_on_fix and applied and fixes:
        return EXIT_FINDINGS
    if manual or pending or hidden or (fixes and not applied):
        return exit_status(EXIT_FINDINGS, exit_zero)
    return EXIT_CLEAN


def _unsafe_on(unsafe_fixes) -> Callable[[str], bool]:
    """Whether unsafe fixes are on is a setting, so per file (``unsafe_fixes(path)``) or for all (a bool)."""
    return unsafe_fixes if callable(unsafe_fixes) else (lambda path, on=bool(unsafe_fixes): on)


def hidden_fixes(results: list[FileResult], unsafe_fixes) -> int:
    """The unsafe fixes left out because ``--unsafe-fixes`` is off (for their file: ``_unsafe_on``)."""
    unsafe_on = _unsafe_on(unsafe_fixes)
    return sum(f.unsafe and not f.fixed and not f.suppressed and not unsafe_on(f.path)
               for r in results for f in r.findings)


def run_stdin(rules: Sequence[type[Rule]], mode: str, name: str, output: Output, options: dict,
              facts_for=None, *, statistics: bool = False, exit_zero: bool = False) -> int:
    """Editor-buffer mode: source on stdin, fixed source (or diff) on stdout, findings on stderr.
    ``facts_for(data)``: the project facts with the buffer in its file's place (None: the buffer alone)."""
    if statistics and mode != "check":
        raise click.UsageError("--statistics on stdin goes with --check (its default)")
    data = sys.stdin.buffer.read()
    facts = facts_for(data) if facts_for else None
    result = with_syntax_checked(fix_source(name, data, rules, facts, options=options, fix=mode != "check"), options)
    output.problems(result.problems)
    if statistics:
        print_statistics([result], "text", output)
    for finding in [] if statistics else result.findings:
        output.finding(finding, written=mode in ("write", "preview"), err=mode != "check")
    if mode == "diff":
        if result.changed:
            output.diff(report.file_diff(name, result.original, result.fixed))
    elif mode != "check":
        # Always echo a whole buffer: on a problem the original, so an editor never loses text.
        sys.stdout.buffer.write(result.output)
        sys.stdout.buffer.flush()
    applied = mode in ("write", "preview")
    return finish([result], result.problems, output, applied=applied, checked=1, report_only=mode == "check",
                  unsafe_fixes=bool(options.get("unsafe_fixes")), exit_zero=exit_zero)


def review_interactively(results, rules, facts, problems, output, options, groups: Sequence[RunGroup] = ()):
    """Ask about each fix on its own (``ddpfix.review``), each file with its own settings (``groups``);
    the results hold exactly the accepted fixes."""
    from ddpfix import review  # loaded for -i only

    settings_of = {path: (group.rules, group.options) for group in groups for path in group.paths}
    return review.review(results, rules, facts, problems, output, options, settings_of)


def run_language_server(args: list[str]) -> int:
    """``ddpfix lsp``: loaded only when asked for."""
    from ddpfix import lsp

    return lsp.main(args)


def main() -> None:
    set_up_for_trees()
    all_rules()  # loaded before the freeze below: every run reads them
    gc.freeze()
    try:  # Ruff's spellings (ddpfix check --fix, rule, server): spellings.py
        sys.argv[1:] = spellings.translate(sys.argv[1:])
    except spellings.NotHere as err:
        click.echo(str(err), err=True)
        sys.exit(EXIT_ERROR)
    # Exactly ``lsp`` as the first argument starts the language server; a folder named lsp is
    # checked as ``ddpfix ./lsp``.
    if sys.argv[1:2] == ["lsp"]:
        sys.exit(run_language_server(sys.argv[2:]))
    if "--watch" in sys.argv[1:]:  # check again on every change (watch.py), as Ruff's --watch
        from ddpfix.watch import watch

        args = [a for a in sys.argv[1:] if a != "--watch"]
        sys.exit(watch(args, [a for a in args if not a.startswith("-") and os.path.exists(a)]))
    # ``rehearse`` runs the user's script on CPU ranks (the one command that runs user code).
    if sys.argv[1:2] == ["rehearse"]:
        from ddpfix.rehearse.command import main as rehearse

        sys.exit(rehearse(sys.argv[2:]))
    try:
        interrupts.install(_written_so_far)  # Ctrl-C: stop the workers, say what was written, exit 130 (docs/interrupts.md)
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
        click.echo(f"error: {err} {_written_so_far()}", err=True)
        sys.exit(EXIT_ERROR)
    except (interrupts.Interrupted, KeyboardInterrupt):
        interrupts.leave(f"Interrupted: {_written_so_far()}")
    sys.exit(code or 0)


def command_line() -> None:
    """The ``ddpfix`` program (its console script, ``python -m ddpfix``): ``main``, whose exit skips
    the interpreter's teardown where nothing is left to clean up. ``main`` itself exits as any
    program does, for those who call it in their own process."""
    try:
        main()
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            exit_now_if_nothing_to_clean_up(done.code or 0)
        raise


def exit_now_if_nothing_to_clean_up(code: int) -> None:
    """End the process with ``code`` without the interpreter's teardown, which frees every module
    and object one by one (~3 ms of a one-file ``--check``: bench/startup.py), where that teardown
    has nothing else to do: no other thread, no child process (a pool of workers, a pager), no
    ``atexit`` hook or ``weakref.finalize`` of a library waiting, no profiler or tracer that writes
    its report after the program returns (``python -m cProfile -m ddpfix``, a debugger, coverage),
    and both output streams there. Otherwise the normal exit runs."""
    import atexit
    import threading
    import weakref

    # (``_ncallbacks`` and ``_registry`` are CPython's; where they are missing, something may wait)
    if threading.active_count() > 1 or getattr(weakref.finalize, "_registry", True) \
            or getattr(atexit, "_ncallbacks", lambda: 1)() \
            or sys.getprofile() is not None or sys.gettrace() is not None or sys.stdout is None or sys.stderr is None:
        return
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is not None and multiprocessing.active_children():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # (a closed pipe: the normal exit reports it as it always did)
    os._exit(code)


def split_config_entries(entries) -> tuple[str | None, str]:
    """``--config`` entries: at most one FILE, and Ruff-style ``KEY = VALUE`` overrides (TOML, as in
    a [tool.ddpfix] table), which win over every table (checked as the table's keys are)."""
    files = [e for e in entries if "=" not in e or os.path.exists(e)]
    overrides = [e for e in entries if e not in files]
    if len(files) > 1:
        raise click.UsageError("--config names more than one file")
    if not overrides:
        return (files[0] if files else None), ""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    for entry in overrides:
        try:
            tomllib.loads(entry)
        except tomllib.TOMLDecodeError as err:
            raise click.UsageError(f"--config {entry!r}: not a TOML `KEY = VALUE` ({err})") from err
    return (files[0] if files else None), "\n".join(overrides)


def _written_so_far() -> str:
    written = files_written()
    if not written:
        return "nothing written."
    return f"{report.plural(written, 'file')} written (complete), the others untouched."
