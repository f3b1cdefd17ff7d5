#!/bin/bash
# A stand-in for devstack's functions and globals, enough to source
# devstack/settings and devstack/plugin.sh outside a devstack run.
#
# Every devstack function the plugin may call appends one line to
# $STUB_LOG: the function name and its arguments, separated by tabs.
# iniset and iniset_rpc_backend also do what devstack's do (write the INI
# file), so the resulting configuration file can be validated. Nothing
# runs with privileges: sudo only records.
# shellcheck disable=SC2034  # devstack globals, read by the plugin

: "${STUB_LOG:?STUB_LOG must name the call log}"
: "${STUB_BIN_DIR:?STUB_BIN_DIR must hold the fake console scripts}"

# Globals stackrc and lib/* would have set (the caller may override).
DEST=${DEST:-/opt/stack}
DATA_DIR=${DATA_DIR:-$DEST/data}
STACK_USER=${STACK_USER:-stack}
SERVICE_HOST=${SERVICE_HOST:-192.0.2.10}
SERVICE_LISTEN_ADDRESS=${SERVICE_LISTEN_ADDRESS:-0.0.0.0}
SERVICE_TIMEOUT=${SERVICE_TIMEOUT:-60}
ENABLE_DEBUG_LOG_LEVEL=${ENABLE_DEBUG_LOG_LEVEL:-True}
DATABASE_BACKENDS=${DATABASE_BACKENDS:-mysql postgresql}
DATABASE_TYPE=${DATABASE_TYPE:-mysql}
RABBIT_USERID=${RABBIT_USERID:-stackrabbit}
RABBIT_PASSWORD=${RABBIT_PASSWORD:-secretrabbit}
RABBIT_HOST=${RABBIT_HOST:-$SERVICE_HOST}
ETCD_PORT=${ETCD_PORT:-2379}
ENABLED_SERVICES=${ENABLED_SERVICES:-rabbit,mysql,etcd3}
SERVICE_PROTOCOL=${SERVICE_PROTOCOL:-http}
REGION_NAME=${REGION_NAME:-RegionOne}
SERVICE_PASSWORD=${SERVICE_PASSWORD:-secretservice}
KEYSTONE_SERVICE_URI=${KEYSTONE_SERVICE_URI:-http://$SERVICE_HOST/identity}

function _stub_record {
    local IFS=$'\t'
    echo "$*" >> "$STUB_LOG"
}

# --- services (functions-common) -----------------------------------------
function is_service_enabled {
    local service
    for service in "$@"; do
        [[ ,${ENABLED_SERVICES}, =~ ,${service}, ]] && return 0
    done
    return 1
}

function enable_service {
    _stub_record enable_service "$@"
    local service
    for service in "$@"; do
        is_service_enabled "$service" || \
            ENABLED_SERVICES+=${ENABLED_SERVICES:+,}$service
    done
}

function define_plugin { _stub_record define_plugin "$@"; }
function plugin_requires { _stub_record plugin_requires "$@"; }

function trueorfalse {
    local default=$1 name=$2
    local value=${!name:-}
    case ${value,,} in
        1|yes|true|on) echo True ;;
        0|no|false|off) echo False ;;
        *) echo "$default" ;;
    esac
}

function echo_summary { _stub_record echo_summary "$@"; }
function die { _stub_record die "$@"; exit 1; }
function sudo { _stub_record sudo "$@"; }

# --- python (inc/python) --------------------------------------------------
function get_python_exec_prefix { echo "$STUB_BIN_DIR"; }
function setup_develop { _stub_record setup_develop "$@"; }
function pip_install { _stub_record pip_install "$@"; }
function pip_install_gr { _stub_record pip_install_gr "$@"; }

# --- configuration (inc/ini-config) ---------------------------------------
function iniset {
    _stub_record iniset "$@"
    local sudo_arg=""
    if [[ $1 == -sudo ]]; then
        sudo_arg=$1
        shift
    fi
    [[ -z $sudo_arg ]] || return 0
    # STUB_PYTHON: the test's interpreter; a pyenv shim (python3 on PATH)
    # took ~0.4 s a call, for some forty calls per stack.sh phase.
    "${STUB_PYTHON:-python3}" -I -S - "$@" <<'PYEOF'
import configparser
import sys

path, section, option, value = sys.argv[1:5]
parser = configparser.RawConfigParser(interpolation=None)
parser.optionxform = str
parser.read(path)
if section != 'DEFAULT' and not parser.has_section(section):
    parser.add_section(section)
parser.set(section, option, value)
with open(path, 'w') as f:
    parser.write(f)
PYEOF
}

# --- RabbitMQ (lib/rpc_backend) -------------------------------------------
function get_transport_url {
    echo "rabbit://$RABBIT_USERID:$RABBIT_PASSWORD@$RABBIT_HOST:5672/$1"
}

function iniset_rpc_backend {
    _stub_record iniset_rpc_backend "$@"
    local file=$2 section=${3:-DEFAULT} virtual_host=$4
    iniset "$file" "$section" transport_url \
        "$(get_transport_url "$virtual_host")"
}

function rpc_backend_add_vhost { _stub_record rpc_backend_add_vhost "$@"; }

# --- database (lib/database) ----------------------------------------------
function database_connection_url {
    _stub_record database_connection_url "$@"
    echo "mysql+pymysql://root:secretdb@127.0.0.1/$1?charset=utf8"
}

function recreate_database { _stub_record recreate_database "$@"; }

# --- processes (functions-common, functions) ------------------------------
function run_process { _stub_record run_process "$@"; }
function stop_process { _stub_record stop_process "$@"; }
function wait_for_service { _stub_record wait_for_service "$@"; }

# --- uwsgi (lib/apache) ---------------------------------------------------
# What devstack's writes for a module with an Apache proxy path.
function write_uwsgi_config {
    _stub_record write_uwsgi_config "$@"
    local conf=$1 wsgi=$2 url=$3
    iniset "$conf" uwsgi module "$wsgi"
    iniset "$conf" uwsgi socket "/var/run/uwsgi/${5}.socket"
    iniset "$conf" uwsgi master true
}

function remove_uwsgi_config { _stub_record remove_uwsgi_config "$@"; }

# --- keystone (lib/keystone, functions-common) ----------------------------
function create_service_user {
    _stub_record create_service_user "$@"
}

function get_or_create_service {
    _stub_record get_or_create_service "$@"
    echo "service-id-$1"
}

function get_or_create_endpoint {
    _stub_record get_or_create_endpoint "$@"
}

# What devstack's writes: auth_token as the service user, password auth.
function configure_keystone_authtoken_middleware {
    _stub_record configure_keystone_authtoken_middleware "$@"
    local conf=$1 user=$2 section=${3:-keystone_authtoken}
    iniset "$conf" "$section" auth_type password
    iniset "$conf" "$section" interface public
    iniset "$conf" "$section" auth_url "$KEYSTONE_SERVICE_URI"
    iniset "$conf" "$section" www_authenticate_uri "$KEYSTONE_SERVICE_URI"
    iniset "$conf" "$section" username "$user"
    iniset "$conf" "$section" password "$SERVICE_PASSWORD"
    iniset "$conf" "$section" user_domain_name Default
    iniset "$conf" "$section" project_name service
    iniset "$conf" "$section" project_domain_name Default
}

# --- TLS (lib/tls), services (functions-common) ---------------------------
INT_CA_DIR=${INT_CA_DIR:-$DATA_DIR/CA/int-ca}
SSL_BUNDLE_FILE=${SSL_BUNDLE_FILE:-$DATA_DIR/ca-bundle.pem}
function make_cert { _stub_record make_cert "$@"; }
function restart_service { _stub_record restart_service "$@"; }
