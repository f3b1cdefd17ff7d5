"""The one version every console script and document reports: pbr's
release string (``0.0.1.dev169`` for a development build, the tag for a
release), so a bug report names the exact build."""
import pbr.version

version_info = pbr.version.VersionInfo('nova_moves')


def version_string():
    """The full release string (pbr's ``release_string``), not the
    shortened ``version_string`` that drops the ``.devN`` suffix."""
    try:
        return version_info.release_string()
    except Exception:  # not installed (a bare checkout on sys.path)
        return '0.0.0'
