"""Policy decisions remembered by the app, with oslo.policy's answers.

oslo.policy's Enforcer.authorize, on every call, walks every registered
rule to re-add the defaults (load_rules) and evaluates the rule's check
tree, calling inspect.getfullargspec on every node and ast.literal_eval
on every generic check: ~0.17 ms per request on a quiet core, 0.4 ms in
a busy API worker, and the same answer every time for the same rule,
target and caller. A decision of the built-in checks (rule, role,
generic, and, or, not, true, false) is a function of those three and of
the rules alone, so the app keeps it, and asks the enforcer again:

- for a (rule, target, credentials) it has not decided since the rules
  last changed;
- after anything oslo.policy reads on a request changed: the policy file
  and the policy.d directories are looked up the way the enforcer looks
  them up (the configuration's find_file, its directories listed once;
  the files' mtimes); a new,
  edited or removed file reloads the rules, as the enforcer would on
  that request, and forgets every decision;
- every time for a rule whose tree holds any other check (``http:``, a
  plug-in): those may answer differently each time.
"""
import functools
import os
import threading

from oslo_config import cfg
from oslo_policy import _checks
from oslo_policy import policy as oslo_policy

# Checks whose answer depends only on the target, the credentials and
# the rules.
_PURE = (_checks.TrueCheck, _checks.FalseCheck, _checks.RoleCheck,
         _checks.GenericCheck)
_NESTED = (_checks.AndCheck, _checks.OrCheck)
# Bounded: a key holds a caller and a project; a cloud's worth of them
# is forgotten in one go rather than kept in order.
_MAX_DECISIONS = 4096


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _newest_in(path):
    """What oslo.policy compares for a policy directory: the newest mtime
    of the directory and its entries."""
    try:
        names = os.listdir(path)
    except OSError:
        return None
    return max([_mtime(path)] + [_mtime(os.path.join(path, name))
                                 for name in names], key=lambda m: m or 0)


@functools.lru_cache(maxsize=8)
def _search_path(config_dirs, config_files, project, _environ):
    """The directories the configuration's find_file searches, in its
    order: config_dir, the config files' directories (last first), then
    oslo.config's standard ones (which read HOME, SNAP and SNAP_COMMON,
    hence ``_environ`` in the key). find_file computes them again on
    every call, most of the cost of looking at the policy sources."""
    dirs = [cfg._fixpath(path) for path in config_dirs]
    dirs += [os.path.dirname(cfg._fixpath(path))
             for path in reversed(config_files)]
    return tuple(dirs + cfg._get_config_dirs(project))


def find_file(conf, name):
    """conf.find_file(name), its directories computed once per
    configuration (tests/unit/api/test_policy_cache.py compares the two)."""
    namespace = getattr(conf, '_namespace', None)
    if namespace is None:
        return conf.find_file(name)  # not initialised: its error
    environ = os.environ
    for directory in _search_path(
            tuple(namespace._config_dirs), tuple(conf.config_file),
            conf.project, (environ.get('HOME'), environ.get('SNAP'),
                           environ.get('SNAP_COMMON'))):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            return path
    return None


def _frozen(values):
    """A hashable form of a target or credentials dict; None when a value
    is not a scalar or a list of scalars (then nothing is remembered)."""
    # oslo.context's policy values warn (DeprecationWarning) when a key
    # added after their creation (our is_admin) is read through them:
    # their plain dict is read instead, so that only a rule that uses
    # the key warns, as before.
    values = getattr(values, '_dict', values)
    items = []
    for key, value in values.items():
        if isinstance(value, list):
            value = tuple(value)
        try:
            hash(value)
        except TypeError:
            return None
        items.append((key, value))
    items.sort()
    return tuple(items)


class Authorizer:
    """enforcer.authorize's verdict, remembered (see the module's doc)."""

    def __init__(self, enforcer):
        self.enforcer = enforcer
        self._lock = threading.Lock()
        self._sources = None
        self._generation = 0
        self._decisions = {}
        self._pure = {}

    def _read_sources(self):
        enforcer = self.enforcer
        conf = enforcer.conf
        # The file the enforcer found, or where it would look for one.
        policy = enforcer.policy_path or find_file(conf,
                                                   enforcer.policy_file)
        dirs = tuple(
            (path, _newest_in(path)) for path in
            (find_file(conf, name) for name in conf.oslo_policy.policy_dirs)
            if path)
        return policy, policy and _mtime(policy), dirs

    def _current(self):
        """The generation of the rules, reloaded when a file changed."""
        sources = self._read_sources()
        if sources != self._sources:
            with self._lock:
                if sources != self._sources:
                    self.enforcer.load_rules()
                    self._decisions = {}
                    self._pure = {}
                    self._generation += 1
                    # As found after loading (the enforcer may have
                    # found the file only now).
                    self._sources = self._read_sources()
        return self._generation

    def _is_pure(self, check, seen=()):
        if isinstance(check, _checks.RuleCheck):
            if check.match in seen:
                return False  # a cycle: let the enforcer say
            nested = self.enforcer.rules.get(check.match)
            return nested is None or self._is_pure(
                nested, seen + (check.match,))
        if isinstance(check, _NESTED):
            return all(self._is_pure(rule, seen) for rule in check.rules)
        if isinstance(check, _checks.NotCheck):
            return self._is_pure(check.rule, seen)
        return type(check) in _PURE

    def _ask(self, rule, target, creds):
        try:
            return self.enforcer.authorize(rule, target, creds,
                                           do_raise=True)
        except (oslo_policy.PolicyNotAuthorized, oslo_policy.InvalidScope):
            return False

    def allowed(self, rule, target, creds, recheck=True):
        """Whether ``creds`` may do ``rule`` on ``target``: the enforcer's
        authorize, with a wrong scope a refusal; PolicyNotRegistered
        raised as it raises it. ``recheck`` False: the policy files were
        looked at already for this request (a list asks once per
        server)."""
        generation = self._current() if recheck else self._generation
        pure = self._pure.get(rule)
        if pure is None:
            check = self.enforcer.rules.get(rule)
            pure = self._pure[rule] = check is None or self._is_pure(check)
        frozen_target, frozen_creds = _frozen(target), _frozen(creds)
        if not pure or frozen_target is None or frozen_creds is None:
            return self._ask(rule, target, creds)
        key = (rule, frozen_target, frozen_creds)
        decisions = self._decisions
        verdict = decisions.get(key)
        if verdict is None:
            verdict = bool(self._ask(rule, target, creds))
            if generation == self._generation:
                if len(decisions) >= _MAX_DECISIONS:
                    decisions.clear()
                decisions[key] = verdict
        return verdict
