"""Scenario files: load a YAML file (or a bundled scenario by name),
check it against a schema and a few cross-references, and fill in the
defaults. Every error names the scenario and the place in it."""
import os

import jsonschema
import yaml

SCENARIO_DIR = os.path.join(os.path.dirname(__file__), 'scenarios')

OPERATIONS = ('resize', 'confirm', 'revert', 'migrate', 'live-migrate',
              'evacuate', 'abort', 'delete', 'wait')
FAULT_ACTIONS = ('kill', 'terminate', 'restart', 'force-down', 'force-up',
                 'set-faults')
MICROVERSION = {'type': 'string', 'pattern': r'^2\.[0-9]+$'}
POSITIVE = {'type': 'number', 'exclusiveMinimum': 0}
NAME = {'type': 'string', 'pattern': r'^[A-Za-z0-9][A-Za-z0-9_.-]*$'}

_COMPUTE_OPTS = {
    'type': 'object', 'additionalProperties': False,
    'properties': {
        'vcpus': {'type': 'integer', 'minimum': 1},
        'memory_mb': {'type': 'integer', 'minimum': 1},
        'disk_gb': {'type': 'integer', 'minimum': 1},
        'cpu_allocation_ratio': POSITIVE,
        'ram_allocation_ratio': POSITIVE,
        'disk_allocation_ratio': POSITIVE,
        'cpu_model': {'type': 'string'},
        'hypervisor_type': {'type': 'string'},
        'disk_provider': {'type': 'string'},
        'availability_zone': {'type': 'string'},
        'default_operation_seconds': {'type': 'number', 'minimum': 0},
        'operation_seconds': {'type': 'object', 'additionalProperties': {
            'type': 'number', 'minimum': 0}},
        'fail_operations': {'type': 'array', 'items': {'type': 'string'}},
        'live_migration_memory_mb': {'type': 'integer', 'minimum': 0},
    }}

_SELECTION = {
    'oneOf': [
        {'type': 'string', 'enum': ['all']},
        {'type': 'object', 'additionalProperties': False, 'minProperties': 1,
         'properties': {'first': {'type': 'integer', 'minimum': 1},
                        'name': {'type': 'string'},
                        'host': {'type': 'string'},
                        'status': {'type': 'string'}}}]}

SCHEMA = {
    'type': 'object', 'additionalProperties': False,
    'required': ['name', 'phases'],
    'properties': {
        'name': NAME,
        'description': {'type': 'string'},
        'topology': {
            'type': 'object', 'additionalProperties': False,
            'properties': {
                'conductors': {'type': 'integer', 'minimum': 1},
                'schedulers': {'type': 'integer', 'minimum': 1},
                'compute': _COMPUTE_OPTS,
                'computes': {'oneOf': [
                    {'type': 'integer', 'minimum': 1},
                    {'type': 'array', 'minItems': 1, 'items': {
                        'type': 'object', 'additionalProperties': False,
                        'required': ['name'],
                        'properties': {
                            'name': NAME,
                            'hosts': {'oneOf': [
                                {'type': 'integer', 'minimum': 1},
                                {'type': 'array', 'minItems': 1,
                                 'items': NAME}]},
                            'compute': _COMPUTE_OPTS}}}]},
                'conf': {'type': 'object', 'additionalProperties': {
                    'type': 'object'}},
                'service_down_time': {'type': 'integer', 'minimum': 1},
            }},
        'flavors': {'type': 'array', 'items': {
            'type': 'object', 'additionalProperties': False,
            'required': ['name', 'vcpus', 'ram'],
            'properties': {'name': NAME,
                           'vcpus': {'type': 'integer', 'minimum': 1},
                           'ram': {'type': 'integer', 'minimum': 1},
                           'disk': {'type': 'integer', 'minimum': 0}}}},
        'servers': {'type': 'array', 'items': {
            'type': 'object', 'additionalProperties': False,
            'required': ['count', 'flavor'],
            'properties': {'count': {'type': 'integer', 'minimum': 1},
                           'flavor': {'type': 'string'},
                           'name': NAME,
                           'host': {'type': 'string'}}}},
        'boot_concurrency': {'type': 'integer', 'minimum': 1},
        'poll_interval': POSITIVE,
        'settle_timeout': POSITIVE,
        'phases': {'type': 'array', 'minItems': 1, 'items': {
            'type': 'object', 'additionalProperties': False,
            'required': ['operation'],
            'properties': {
                'name': NAME,
                'operation': {'type': 'string', 'enum': list(OPERATIONS)},
                'servers': _SELECTION,
                'concurrency': {'type': 'integer', 'minimum': 1},
                'microversion': MICROVERSION,
                'params': {'type': 'object'},
                'timeout': POSITIVE,
                'seconds': {'type': 'number', 'minimum': 0},
            }}},
        'faults': {'type': 'array', 'items': {
            'type': 'object', 'additionalProperties': False,
            'required': ['action'],
            'properties': {
                'action': {'type': 'string', 'enum': list(FAULT_ACTIONS)},
                'at': {'type': 'number', 'minimum': 0},
                'phase': NAME,
                'process': {'type': 'string'},
                'host': {'type': 'string'},
                'restart_after': {'type': 'number', 'minimum': 0},
                'fail_operations': {'type': 'array',
                                    'items': {'type': 'string'}},
                'operation_seconds': {'type': 'object'},
            }}},
    }}

_PARAMS = {
    'resize': {'flavor'},
    'confirm': set(), 'revert': set(), 'delete': set(), 'abort': set(),
    'migrate': {'host', 'force', 'check'},
    'live-migrate': {'host', 'force', 'block_migration', 'abort_after',
                     'check'},
    'evacuate': {'host', 'force', 'check'},
    'wait': set(),
}


class ScenarioError(ValueError):
    pass


def _where(path):
    out = ''
    for part in path:
        out += '[%d]' % part if isinstance(part, int) else (
            '.%s' % part if out else part)
    return out or '(top level)'


def bundled():
    """{name: path} of the scenarios shipped with the harness."""
    return {os.path.splitext(f)[0]: os.path.join(SCENARIO_DIR, f)
            for f in sorted(os.listdir(SCENARIO_DIR))
            if f.endswith(('.yaml', '.yml'))}


def resolve(name_or_path):
    if os.path.exists(name_or_path):
        return name_or_path
    known = bundled()
    if name_or_path in known:
        return known[name_or_path]
    raise ScenarioError('no scenario file %r and no bundled scenario of that '
                        'name (bundled: %s)' % (name_or_path,
                                                ', '.join(known)))


def load(name_or_path):
    path = resolve(name_or_path)
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except yaml.YAMLError as exc:
        raise ScenarioError('%s: not valid YAML: %s' % (path, exc))
    return validate(data, source=path)


def _hosts_of(spec):
    hosts = spec.get('hosts')
    if hosts is None:
        return [spec['name']]
    if isinstance(hosts, int):
        if hosts == 1:
            return [spec['name']]
        return ['%s-h%d' % (spec['name'], i + 1) for i in range(hosts)]
    return list(hosts)


def compute_processes(topology):
    """Stack compute specs: [{'name', 'hosts', 'compute'}] with the
    topology-wide compute options under each process's own."""
    computes = topology.get('computes', 2)
    if isinstance(computes, int):
        computes = [{'name': 'compute%d' % (i + 1)} for i in range(computes)]
    common = topology.get('compute', {})
    out = []
    for spec in computes:
        opts = dict(common)
        opts.update(spec.get('compute') or {})
        out.append({'name': spec['name'], 'hosts': _hosts_of(spec),
                    'compute': opts})
    return out


def validate(data, source='<scenario>'):
    """The scenario with defaults filled in, or ScenarioError."""
    if not isinstance(data, dict):
        raise ScenarioError('%s: a scenario is a mapping, got %s'
                            % (source, type(data).__name__))
    validator = jsonschema.Draft7Validator(SCHEMA)
    errors = sorted(validator.iter_errors(data),
                    key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = []
        for err in errors:
            message = err.message
            if err.validator == 'oneOf':
                message = '%r is not a valid value here' % (err.instance,)
            lines.append('  %s: %s' % (_where(list(err.absolute_path)),
                                       message))
        raise ScenarioError('%s: invalid scenario:\n%s' % (
            source, '\n'.join(lines)))
    data = dict(data)
    topology = dict(data.get('topology') or {})
    topology.setdefault('conductors', 1)
    topology.setdefault('schedulers', 1)
    topology['compute_processes'] = compute_processes(topology)
    data['topology'] = topology
    data.setdefault('flavors', [])
    data.setdefault('servers', [])
    data.setdefault('faults', [])
    data.setdefault('boot_concurrency', 10)
    data.setdefault('poll_interval', 0.1)
    data.setdefault('settle_timeout', 120)
    problems = []
    flavors = {f['name'] for f in data['flavors']}
    hosts = [h for p in topology['compute_processes'] for h in p['hosts']]
    if len(set(hosts)) != len(hosts):
        problems.append('topology.computes: host names repeat: %s' % hosts)
    for i, server in enumerate(data['servers']):
        if server['flavor'] not in flavors:
            problems.append('servers[%d].flavor: unknown flavor %r '
                            '(flavors: %s)' % (i, server['flavor'],
                                               sorted(flavors)))
    phases = []
    for i, phase in enumerate(data['phases']):
        phase = dict(phase)
        phase.setdefault('name', '%s-%d' % (phase['operation'], i + 1))
        phase.setdefault('servers', 'all')
        phase.setdefault('concurrency', 10)
        phase.setdefault('microversion', '2.1')
        phase.setdefault('params', {})
        phase.setdefault('timeout', 120)
        unknown = set(phase['params']) - _PARAMS[phase['operation']]
        if unknown:
            problems.append('phases[%d].params: %s not understood by %s '
                            '(allowed: %s)' % (
                                i, ', '.join(sorted(unknown)),
                                phase['operation'],
                                ', '.join(sorted(_PARAMS[phase['operation']]))
                                or 'none'))
        if phase['operation'] == 'resize':
            wanted = phase['params'].get('flavor')
            names = wanted if isinstance(wanted, list) else [wanted]
            for name in names:
                if name not in flavors:
                    problems.append('phases[%d].params.flavor: unknown '
                                    'flavor %r' % (i, name))
        phases.append(phase)
    names = [p['name'] for p in phases]
    if len(set(names)) != len(names):
        problems.append('phases: phase names repeat: %s' % names)
    data['phases'] = phases
    processes = {'api'} | {'conductor%d' % (i + 1) for i in range(
        topology['conductors'])} | {'scheduler%d' % (i + 1) for i in range(
            topology['schedulers'])} | {p['name'] for p in
                                        topology['compute_processes']}
    for i, fault in enumerate(data['faults']):
        fault.setdefault('at', 0)
        if 'phase' in fault and fault['phase'] not in names:
            problems.append('faults[%d].phase: no phase named %r (phases: '
                            '%s)' % (i, fault['phase'], ', '.join(names)))
        if fault['action'] in ('kill', 'terminate', 'restart'):
            if fault.get('process') not in processes:
                problems.append('faults[%d].process: %r is not a process of '
                                'the topology (%s)' % (
                                    i, fault.get('process'),
                                    ', '.join(sorted(processes))))
        elif fault.get('host') not in hosts:
            problems.append('faults[%d].host: %r is not a compute host of '
                            'the topology (%s)' % (i, fault.get('host'),
                                                   ', '.join(hosts)))
    if problems:
        raise ScenarioError('%s: invalid scenario:\n%s' % (
            source, '\n'.join('  ' + p for p in problems)))
    return data
