"""docker/Dockerfile read as its builder reads it, for the tests that run
the image's parts outside a container (docker_entrypoint_test, compose_test):
its stages, each stage's instructions, and what they say (ENV, COPY,
ENTRYPOINT, HEALTHCHECK, WORKDIR ...)."""

import json
import os
import re
import shlex

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCKERFILE = os.path.join(REPO, "docker", "Dockerfile")


def instructions(text):
    """[(INSTRUCTION, arguments)] with comments dropped and `\\` continuations joined."""
    out, pending = [], ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line, pending = pending + line, ""
        word, _, rest = line.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return out


def exec_form(args):
    """A JSON array (exec form) or a shell-form string -> argv."""
    return json.loads(args) if args.startswith("[") else ["/bin/sh", "-c", args]


class Stage:
    def __init__(self, base, name):
        self.base, self.name, self.steps = base, name, []

    def all(self, word):
        return [args for w, args in self.steps if w == word]

    def last(self, word):
        found = self.all(word)
        return found[-1] if found else None

    def run_commands(self):
        """Each RUN split at `&&` into single commands, in order."""
        return [c.strip() for args in self.all("RUN") for c in args.split("&&")]

    def env(self):
        """ENV key=value pairs (the form this Dockerfile uses)."""
        env = {}
        for args in self.all("ENV"):
            for pair in shlex.split(args):
                key, sep, value = pair.partition("=")
                assert sep, "ENV %r: use the key=value form" % args
                env[key] = value
        return env

    def copies(self):
        """[(from stage or None, source, destination)] of the COPY lines."""
        out = []
        for args in self.all("COPY"):
            words = shlex.split(args)
            flags = [w for w in words if w.startswith("--")]
            paths = [w for w in words if not w.startswith("--")]
            source = next((f.split("=", 1)[1] for f in flags if f.startswith("--from=")), None)
            for src in paths[:-1]:
                out.append((source, src, paths[-1]))
        return out

    def installed(self, path):
        """Where this stage's image has a file of the repository (COPY from the build context)."""
        for source, src, dst in self.copies():
            if source is None and src == path:
                return dst
        raise AssertionError("stage %s copies no %s" % (self.name, path))

    def entrypoint(self):
        args = self.last("ENTRYPOINT")
        return exec_form(args) if args else []

    def healthcheck(self):
        """(options, argv) of HEALTHCHECK ... CMD ..."""
        args = self.last("HEALTHCHECK")
        assert args, "stage %s has no HEALTHCHECK" % self.name
        options, _, command = args.partition("CMD ")
        return dict(o.lstrip("-").split("=", 1) for o in options.split()), exec_form(command.strip())


def stages(path=DOCKERFILE):
    """{name: Stage} in file order; the last one is what a plain `docker build` makes."""
    with open(path) as f:
        text = f.read()
    found, current = {}, None
    for word, args in instructions(text):
        if word == "FROM":
            m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?$", args, re.I)
            assert m, "FROM %r" % args
            current = Stage(m.group(1), m.group(2) or str(len(found)))
            found[current.name] = current
        else:
            assert current is not None, "%s before FROM" % word
            current.steps.append((word, args))
    return found
