import warnings

# oslo.messaging imports oslo.service, whose default backend imports
# eventlet, which warns at import that it is deprecated. nova_moves runs
# on native threads and never on eventlet: the warning would only be noise
# at every service start.
warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
