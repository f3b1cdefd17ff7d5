import pbr.version

version_info = pbr.version.VersionInfo('nova_moves')


def version_string():
    try:
        return version_info.version_string()
    except Exception:
        return '0.0.0'
