#!/bin/bash
# devstack/plugin.sh: nova_moves as devstack services.
#
# stack.sh, unstack.sh and clean.sh source this file as
#   source plugin.sh <mode> [phase]
# with the variables of devstack/settings and devstack's functions
# (iniset, run_process, ...) already defined.
#
# Services (see devstack/settings):
#   nm-api    nova-moves-api        the compute API
#   nm-cond   nova-moves-conductor  move flows; the database for computes
#   nm-sched  nova-moves-scheduler
#   nm-cpu    nova-moves-compute    fake hypervisor agent

# Save trace setting
_XTRACE_NOVA_MOVES=$(set +o | grep xtrace)
set +o xtrace

# Services that open the database (everything but the compute agent).
NOVA_MOVES_DB_SERVICES="nm-api nm-cond nm-sched"

# The tooz URL: explicit, devstack's etcd, or a node-local file backend.
function nova_moves_coordination_url {
    if [[ -n "$NOVA_MOVES_COORDINATION_URL" ]]; then
        echo "$NOVA_MOVES_COORDINATION_URL"
    elif is_service_enabled etcd3; then
        echo "etcd3+http://${SERVICE_HOST}:${ETCD_PORT:-2379}"
    else
        echo "file://$NOVA_MOVES_STATE_PATH/coordination"
    fi
}

# -- RabbitMQ: per-service users, TLS ----------------------------------------

# The kind of service (broker user suffix, config file) of a devstack one.
function nova_moves_rabbit_kind {
    case $1 in
        nm-api) echo api ;;
        nm-cond) echo conductor ;;
        nm-sched) echo scheduler ;;
        nm-cpu) echo compute ;;
    esac
}

# The configure, write and read regexes (one a line) a kind of service's
# user needs on the vhost: the control exchange and its own reply queues
# for everyone, its topic's queues and fanout exchange for a server, the
# default exchange for replies, the notification queues for computes.
# nova_moves.broker_tls.permissions says why; a unit test keeps the two
# equal.
function nova_moves_rabbit_permissions {
    local kind=$1
    # The calls' own exchange and queues too (nova_moves/rpc.py).
    local names='nova_moves|nova_moves_calls|reply_.*'
    if [[ $kind != api ]]; then
        names+="|$kind|$kind\\..*|${kind}_fanout.*"
        names+="|${kind}_calls|${kind}_calls\\..*|${kind}_calls_fanout.*"
    fi
    if [[ $kind == compute ]]; then
        names+='|versioned_notifications\..*'
    fi
    printf '%s\n' "^($names)\$" "^($names|amq\\.default)\$" "^($names)\$"
}

# A transport_url for broker user $1 (password $2): the TLS port when
# NOVA_MOVES_RABBIT_TLS is on.
function nova_moves_transport_url {
    local port=5672
    if [[ "$NOVA_MOVES_RABBIT_TLS" == True ]]; then
        port=$NOVA_MOVES_RABBIT_TLS_PORT
    fi
    echo "rabbit://$1:$2@$RABBIT_HOST:$port/$NOVA_MOVES_RABBIT_VHOST"
}

# The file holding a kind of service's own transport_url.
function nova_moves_service_conf {
    echo "$NOVA_MOVES_CONF_DIR/nova-moves-$1.conf"
}

# The --config-file arguments of devstack service $1.
function nova_moves_conf_args {
    local args="--config-file $NOVA_MOVES_CONF"
    if [[ "$NOVA_MOVES_RABBIT_SERVICE_USERS" == True ]]; then
        args+=" --config-file $(nova_moves_service_conf \
"$(nova_moves_rabbit_kind "$1")")"
    fi
    echo "$args"
}

# On the rabbit node: the four users with their password and permissions
# on the vhost. Idempotent: an existing user gets both set again.
function create_nova_moves_rabbit_users {
    local vhost=${NOVA_MOVES_RABBIT_VHOST:-/}
    local kind user users
    local -a perms
    users=$(sudo rabbitmqctl -q list_users | awk '{print $1}')
    for kind in api conductor scheduler compute; do
        user=$NOVA_MOVES_RABBIT_USER_PREFIX$kind
        if grep -qx -- "$user" <<< "$users"; then
            sudo rabbitmqctl change_password "$user" \
                "$NOVA_MOVES_RABBIT_PASSWORD"
        else
            sudo rabbitmqctl add_user "$user" "$NOVA_MOVES_RABBIT_PASSWORD"
        fi
        mapfile -t perms < <(nova_moves_rabbit_permissions "$kind")
        sudo rabbitmqctl set_permissions -p "$vhost" "$user" "${perms[@]}"
    done
}

# On the rabbit node: a TLS listener beside the plain one (the other
# projects keep 5672), then a restart. Idempotent: the marked block of
# rabbitmq.conf is replaced, the certificate made once (make_cert keeps
# an existing one).
function configure_nova_moves_rabbit_tls {
    local dir=/etc/rabbitmq/nova-moves-tls
    local conf=/etc/rabbitmq/rabbitmq.conf
    local cert=$NOVA_MOVES_RABBIT_CERT_FILE key=$NOVA_MOVES_RABBIT_KEY_FILE
    if [[ -z "$cert" ]]; then
        local alt="DNS:$RABBIT_HOST"
        if [[ $RABBIT_HOST =~ ^[0-9.]+$ || $RABBIT_HOST == *:* ]]; then
            alt="IP:$RABBIT_HOST"
        fi
        # devstack's lib/tls, with its CA (tls-proxy or USE_SSL).
        make_cert "$INT_CA_DIR" nova-moves-rabbitmq "$RABBIT_HOST" "$alt"
        cert=$INT_CA_DIR/nova-moves-rabbitmq.crt
        key=$INT_CA_DIR/private/nova-moves-rabbitmq.key
    fi
    sudo install -d -m 0750 -o rabbitmq -g rabbitmq "$dir"
    sudo install -m 0644 -o rabbitmq -g rabbitmq \
        "$NOVA_MOVES_RABBIT_CA_FILE" "$dir/ca.pem"
    sudo install -m 0644 -o rabbitmq -g rabbitmq "$cert" "$dir/cert.pem"
    sudo install -m 0600 -o rabbitmq -g rabbitmq "$key" "$dir/key.pem"
    sudo touch "$conf"
    sudo sed -i '/^# BEGIN nova-moves TLS/,/^# END nova-moves TLS/d' "$conf"
    sudo tee -a "$conf" > /dev/null <<EOF
# BEGIN nova-moves TLS (devstack/plugin.sh)
listeners.ssl.default = $NOVA_MOVES_RABBIT_TLS_PORT
ssl_options.cacertfile = $dir/ca.pem
ssl_options.certfile = $dir/cert.pem
ssl_options.keyfile = $dir/key.pem
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = false
ssl_options.versions.1 = tlsv1.3
ssl_options.versions.2 = tlsv1.2
# END nova-moves TLS
EOF
    restart_service rabbitmq-server
}

# stack post-config: how each service on this node reaches the broker.
function configure_nova_moves_rabbit {
    if is_service_enabled rabbit; then
        if [[ "$NOVA_MOVES_RABBIT_TLS" == True ]]; then
            configure_nova_moves_rabbit_tls
        fi
        if [[ "$NOVA_MOVES_RABBIT_SERVICE_USERS" == True ]]; then
            create_nova_moves_rabbit_users
        fi
    fi
    if [[ "$NOVA_MOVES_RABBIT_TLS" == True ]]; then
        # The shared file (nova-moves-manage) connects the same way.
        iniset "$NOVA_MOVES_CONF" DEFAULT transport_url \
            "$(nova_moves_transport_url "$RABBIT_USERID" "$RABBIT_PASSWORD")"
        iniset "$NOVA_MOVES_CONF" oslo_messaging_rabbit ssl True
        iniset "$NOVA_MOVES_CONF" oslo_messaging_rabbit ssl_ca_file \
            "$NOVA_MOVES_RABBIT_CA_FILE"
    fi
    local service kind conf
    for service in $NOVA_MOVES_SERVICES; do
        kind=$(nova_moves_rabbit_kind "$service")
        conf=$(nova_moves_service_conf "$kind")
        rm -f "$conf"
        if [[ "$NOVA_MOVES_RABBIT_SERVICE_USERS" == True ]] && \
                is_service_enabled "$service"; then
            # Holds a password: not world-readable.
            (umask 027 && iniset "$conf" DEFAULT transport_url \
                "$(nova_moves_transport_url \
"$NOVA_MOVES_RABBIT_USER_PREFIX$kind" "$NOVA_MOVES_RABBIT_PASSWORD")")
        fi
    done
}

# stack install: the package (editable, like devstack's own projects).
function install_nova_moves {
    setup_develop "$NOVA_MOVES_DIR"
    if [[ "$(nova_moves_coordination_url)" == etcd3+http* ]]; then
        # tooz's etcd3+http driver talks to etcd's grpc gateway.
        pip_install_gr etcd3gw
    fi
}

# stack post-config: /etc/nova_moves/nova_moves.conf from scratch.
function configure_nova_moves {
    sudo install -d -o "$STACK_USER" "$NOVA_MOVES_CONF_DIR"
    sudo install -d -o "$STACK_USER" "$NOVA_MOVES_STATE_PATH"
    rm -f "$NOVA_MOVES_CONF"

    iniset "$NOVA_MOVES_CONF" DEFAULT debug "$ENABLE_DEBUG_LOG_LEVEL"
    iniset "$NOVA_MOVES_CONF" DEFAULT state_path "$NOVA_MOVES_STATE_PATH"

    if [[ -n "$NOVA_MOVES_RABBIT_VHOST" ]] && is_service_enabled rabbit; then
        rpc_backend_add_vhost "$NOVA_MOVES_RABBIT_VHOST"
    fi
    iniset_rpc_backend nova_moves "$NOVA_MOVES_CONF" DEFAULT \
        "$NOVA_MOVES_RABBIT_VHOST"
    configure_nova_moves_rabbit

    # shellcheck disable=SC2086
    if is_service_enabled $NOVA_MOVES_DB_SERVICES; then
        iniset "$NOVA_MOVES_CONF" database connection \
            "$(database_connection_url "$NOVA_MOVES_DB_NAME")"
    fi

    iniset "$NOVA_MOVES_CONF" coordination backend_url \
        "$(nova_moves_coordination_url)"

    # An IPv6 devstack may hand "[::]": the option wants the bare address.
    local listen=${NOVA_MOVES_API_LISTEN#[}
    iniset "$NOVA_MOVES_CONF" api listen "${listen%]}"
    iniset "$NOVA_MOVES_CONF" api auth_strategy "$NOVA_MOVES_AUTH_STRATEGY"
    if [[ "$NOVA_MOVES_AUTH_STRATEGY" == keystone ]] && \
            is_service_enabled nm-api; then
        configure_keystone_authtoken_middleware "$NOVA_MOVES_CONF" \
            nova-moves
        iniset "$NOVA_MOVES_CONF" api link_prefix "$NOVA_MOVES_API_URL"
    fi
    iniset "$NOVA_MOVES_CONF" api port "$NOVA_MOVES_API_PORT"
    iniset "$NOVA_MOVES_CONF" api enable_test_hooks \
        "$NOVA_MOVES_ENABLE_TEST_HOOKS"

    if [[ -n "$NOVA_MOVES_FAKE_HOSTS" ]]; then
        iniset "$NOVA_MOVES_CONF" compute fake_hosts "$NOVA_MOVES_FAKE_HOSTS"
    fi

    if [[ "$NOVA_MOVES_API_WSGI" == uwsgi ]] && is_service_enabled nm-api
    then
        # As lib/nova does for n-api: Apache proxies /<service type> to
        # uwsgi, which loads nova_moves.wsgi.api with our configuration.
        write_uwsgi_config "$NOVA_MOVES_UWSGI_CONF" \
            "nova_moves.wsgi.api:application" "/$NOVA_MOVES_SERVICE_TYPE" \
            "" nova-moves-api
        local configs=$NOVA_MOVES_CONF
        if [[ "$NOVA_MOVES_RABBIT_SERVICE_USERS" == True ]]; then
            configs+=,$(nova_moves_service_conf api)
        fi
        iniset "$NOVA_MOVES_UWSGI_CONF" uwsgi env \
            "NOVA_MOVES_CONFIG=$configs"
        # Slow clients: Apache reads headers whole before it calls uwsgi
        # (mod_reqtimeout bounds them and the body's rate); a read from
        # Apache's socket waiting longer than 10 s ends the request, and
        # no request holds a uwsgi worker longer than 180 s.
        # doc/api-server.md says more.
        iniset "$NOVA_MOVES_UWSGI_CONF" uwsgi socket-timeout 10
        iniset "$NOVA_MOVES_UWSGI_CONF" uwsgi harakiri 180
    fi
}

# stack post-config, on the API node with keystone: the service user
# auth_token validates tokens as, the service and its endpoint in the
# catalog (clients find the API through Keystone, as Nova's).
function create_nova_moves_accounts {
    create_service_user nova-moves admin
    local service_id
    service_id=$(get_or_create_service nova-moves \
        "$NOVA_MOVES_SERVICE_TYPE" "nova_moves compute API (server moves)")
    get_or_create_endpoint "$service_id" "$REGION_NAME" \
        "$NOVA_MOVES_API_URL/v2.1"
}

# stack extra, on the node with the database: an empty schema at head.
function init_nova_moves {
    # shellcheck disable=SC2086
    if is_service_enabled $DATABASE_BACKENDS && \
            is_service_enabled $NOVA_MOVES_DB_SERVICES; then
        recreate_database "$NOVA_MOVES_DB_NAME"
        "$NOVA_MOVES_BIN_DIR/nova-moves-manage" \
            --config-file "$NOVA_MOVES_CONF" db sync
    fi
}

# stack extra: one systemd unit (devstack@<service>) per enabled process.
# run_process does nothing for a service that is not enabled.
function start_nova_moves {
    if [[ "$NOVA_MOVES_API_WSGI" == uwsgi ]]; then
        run_process nm-api "$(command -v uwsgi) --procname-prefix \
nova-moves-api --ini $NOVA_MOVES_UWSGI_CONF"
    else
        run_process nm-api "$NOVA_MOVES_BIN_DIR/nova-moves-api \
$(nova_moves_conf_args nm-api)"
    fi
    run_process nm-cond "$NOVA_MOVES_BIN_DIR/nova-moves-conductor \
$(nova_moves_conf_args nm-cond)"
    run_process nm-sched "$NOVA_MOVES_BIN_DIR/nova-moves-scheduler \
$(nova_moves_conf_args nm-sched)"
    run_process nm-cpu "$NOVA_MOVES_BIN_DIR/nova-moves-compute \
$(nova_moves_conf_args nm-cpu)"

    if is_service_enabled nm-api; then
        if ! wait_for_service "$SERVICE_TIMEOUT" "$NOVA_MOVES_API_URL/"; then
            die $LINENO "nova-moves-api did not start"
        fi
    fi
}

# unstack: SIGTERM; the processes finish in-flight work and exit.
function stop_nova_moves {
    local service
    for service in $NOVA_MOVES_SERVICES; do
        stop_process "$service"
    done
}

# clean (after unstack): configuration and local state. clean.sh drops
# the databases itself.
function cleanup_nova_moves {
    if [[ "$NOVA_MOVES_API_WSGI" == uwsgi ]]; then
        remove_uwsgi_config "$NOVA_MOVES_UWSGI_CONF" nova-moves-api
    fi
    sudo rm -rf "$NOVA_MOVES_STATE_PATH" "$NOVA_MOVES_CONF_DIR"
    if [[ "$NOVA_MOVES_RABBIT_TLS" == True ]] && is_service_enabled rabbit
    then
        sudo sed -i '/^# BEGIN nova-moves TLS/,/^# END nova-moves TLS/d' \
            /etc/rabbitmq/rabbitmq.conf
        sudo rm -rf /etc/rabbitmq/nova-moves-tls
    fi
}

# shellcheck disable=SC2086
if is_service_enabled $NOVA_MOVES_SERVICES; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing nova_moves"
        install_nova_moves
    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring nova_moves"
        configure_nova_moves
        if [[ "$NOVA_MOVES_AUTH_STRATEGY" == keystone ]] && \
                is_service_enabled nm-api; then
            create_nova_moves_accounts
        fi
    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Initializing and starting nova_moves"
        init_nova_moves
        start_nova_moves
    fi

    if [[ "$1" == "unstack" ]]; then
        stop_nova_moves
    fi

    if [[ "$1" == "clean" ]]; then
        cleanup_nova_moves
    fi
fi

# Restore xtrace
$_XTRACE_NOVA_MOVES
