import os, subprocess, sys, yaml
wf = yaml.safe_load(open("/work/main/docs/ci/streamspec-bench.yml"))
steps = [s for s in wf["jobs"]["bench"]["steps"] if "run" in s]
env = dict(os.environ, **{k: str(v) for k, v in wf["env"].items()})
env.update(RUNNER_TEMP="/tmp/ci-sim/rt", ENGINE="mine", BASELINE="rwc")
base = open("/tmp/ci-sim/base.sha").read().strip()
pth = "import site; site.addsitedir('/work/venv/lib/python3.11/site-packages')\n"
for step in steps:
    script = step["run"].replace("${{ github.event.pull_request.base.sha }}", base).replace('${{ runner.temp }}', '/tmp/ci-sim/rt')
    # simulation only: streamspec comes from /work/venv (a .pth), no index; a tiny scale
    script = script.replace('install "$STREAMSPEC"', 'install -q --no-deps --no-build-isolation')
    for v in ("venv-base", "venv-head"):
        script = script.replace(f'"$RUNNER_TEMP/{v}/bin/pip" install', f'"$RUNNER_TEMP/{v}/bin/pip" install -q wheel && "$RUNNER_TEMP/{v}/bin/pip" install')
    script = script.replace('python -m venv "$RUNNER_TEMP/venv-base"',
        'python -m venv "$RUNNER_TEMP/venv-base" && echo "%s" > $RUNNER_TEMP/venv-base/lib/python3.11/site-packages/ws.pth' % pth.strip())
    script = script.replace('python -m venv "$RUNNER_TEMP/venv-head"',
        'python -m venv "$RUNNER_TEMP/venv-head" && echo "%s" > $RUNNER_TEMP/venv-head/lib/python3.11/site-packages/ws.pth' % pth.strip())
    for v in ("venv-base", "venv-head"):   # the console script pip would install with streamspec
        script = script.replace(f'"$RUNNER_TEMP/{v}/bin/pip" install -q wheel', f'printf "#!$RUNNER_TEMP/{v}/bin/python\\nimport sys\\nfrom streamspec.pipeline.cli import main\\nsys.exit(main())\\n" > "$RUNNER_TEMP/{v}/bin/streamspec" && chmod +x "$RUNNER_TEMP/{v}/bin/streamspec" && "$RUNNER_TEMP/{v}/bin/pip" install -q wheel')
    script = script.replace('--baseline "$BASELINE"', '--baseline "$BASELINE" --scale 0.002 --repeats 3 --quiet')
    print("== step:", step["name"], flush=True)
    done = subprocess.run(["bash", "-e", "-c", script], cwd="/tmp/ci-sim/repo", env=env)
    print("== exit", done.returncode, flush=True)
    if done.returncode:
        break
