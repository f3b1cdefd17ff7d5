# Sourced by the quickstart, the test runner and CI: a virtualenv with the
# project and its test requirements, and a running local RabbitMQ.
VENV=${VENV:-$PWD/.venv}
if [ ! -x "$VENV/bin/python" ] || [ requirements.txt -nt "$VENV/.installed" ] \
    || [ test-requirements.txt -nt "$VENV/.installed" ] \
    || [ setup.cfg -nt "$VENV/.installed" ]; then
    echo "Installing nova_moves into $VENV ..." >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip >/dev/null
    "$VENV/bin/pip" install -q -r requirements.txt -r test-requirements.txt
    "$VENV/bin/pip" install -q -e .
    touch "$VENV/.installed"
fi
if ! rabbitmqctl -q status >/dev/null 2>&1; then
    echo "RabbitMQ is not running; starting it (rabbitmq-server -detached)" >&2
    rabbitmq-server -detached
    for _ in $(seq 60); do
        rabbitmqctl -q status >/dev/null 2>&1 && break
        sleep 1
    done
fi
export PATH="$VENV/bin:$PATH"
