"""Request bodies of the Nova API actions the harness sends, shaped per
microversion as a client would shape them. Mixed into the Runner, whose
hosts and flavors they use."""


def mv(version):
    major, minor = str(version).split('.')
    return int(major), int(minor)


class BodiesMixin:

    def _other_host(self, current):
        if current in self.hosts:
            return self.hosts[(self.hosts.index(current) + 1)
                              % len(self.hosts)]
        return self.hosts[0]

    def _host_param(self, params, view):
        host = params.get('host')
        if host == '@next':
            return self._other_host(view.get('OS-EXT-SRV-ATTR:host'))
        return host

    # -- request bodies (the Nova API contract) -------------------------------
    def action_body(self, op, version, params, view):
        v = mv(version)
        if op == 'resize':
            wanted = params['flavor']
            names = wanted if isinstance(wanted, list) else [wanted]
            current = (view.get('flavor') or {}).get('original_name')
            for name in names:
                flavor = self.flavors[name]
                if flavor['name'] != current:
                    break
            return {'resize': {'flavorRef': flavor['id']}}
        if op == 'confirm':
            return {'confirmResize': None}
        if op == 'revert':
            return {'revertResize': None}
        if op == 'migrate':
            host = self._host_param(params, view)
            body = {}
            if host and v >= (2, 56):
                body['host'] = host
            for key in ('force', 'check'):
                if key in params:
                    body[key] = params[key]
            return {'migrate': body or None}
        if op == 'live-migrate':
            body = {'host': self._host_param(params, view)}
            if v >= (2, 25):
                body['block_migration'] = params.get('block_migration',
                                                     'auto')
            else:
                body['block_migration'] = params.get('block_migration', False)
                body['disk_over_commit'] = False
            if 'force' in params and (2, 30) <= v < (2, 68):
                body['force'] = params['force']
            if 'check' in params:
                body['check'] = params['check']
            return {'os-migrateLive': body}
        if op == 'evacuate':
            body = {}
            host = self._host_param(params, view)
            if host:
                body['host'] = host
            if v < (2, 14):
                body['onSharedStorage'] = False
            if 'force' in params and (2, 29) <= v < (2, 68):
                body['force'] = params['force']
            if 'check' in params:
                body['check'] = params['check']
            return {'evacuate': body}
        raise ValueError('no action body for %s' % op)

    # A confirm's or revert's 204/202 comes back while the server still
    # shows VERIFY_RESIZE with no task_state: not finished yet.
    STILL_GOING = {'confirm': ('VERIFY_RESIZE',),
                   'revert': ('VERIFY_RESIZE',)}

    EXPECTED_STATUS = {'resize': 202, 'confirm': 204, 'revert': 202,
                       'migrate': 202, 'live-migrate': 202, 'evacuate': 200,
                       'abort': 202, 'delete': 204}
