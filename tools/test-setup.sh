#!/bin/bash
# Create the openstack_citest user and database (password openstack_citest)
# on the local MariaDB/MySQL and PostgreSQL for oslo.db's opportunistic
# tests, install QEMU and build the test guest (doc/test-guest.md) into
# $PWD/.test-guest/. Idempotent: safe to run again. A database server that
# is not installed or not running is skipped (its tests then skip
# themselves); so is the guest when QEMU cannot be installed.
set -u
DB_USER=openstack_citest
DB_PW=openstack_citest
ROOT_PW=${MYSQL_ROOT_PW:-}

mysql_root() {
    if [ -n "$ROOT_PW" ]; then
        mysql -uroot -p"$ROOT_PW" "$@"
    else
        # MariaDB on Debian: root over the unix socket, no password.
        mysql -uroot "$@"
    fi
}

setup_mysql() {
    if ! command -v mysql >/dev/null 2>&1; then
        echo "test-setup: no mysql client; skipping MySQL" >&2
        return 0
    fi
    if ! mysql_root -e 'SELECT 1' >/dev/null 2>&1; then
        echo "test-setup: cannot reach MySQL as root; skipping MySQL" >&2
        return 0
    fi
    # The opportunistic fixtures create and drop their own databases, so
    # the user needs privileges beyond openstack_citest itself.
    mysql_root <<SQL
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PW';
CREATE USER IF NOT EXISTS '$DB_USER'@'%' IDENTIFIED BY '$DB_PW';
ALTER USER '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PW';
ALTER USER '$DB_USER'@'%' IDENTIFIED BY '$DB_PW';
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'localhost' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'%' WITH GRANT OPTION;
CREATE DATABASE IF NOT EXISTS $DB_USER;
FLUSH PRIVILEGES;
SQL
    echo "test-setup: MySQL user and database $DB_USER ready"
}

psql_admin() {
    # Whichever way to the postgres superuser works here: trust auth over
    # TCP, then peer auth via su or sudo.
    if psql -U postgres -h 127.0.0.1 -tAc 'SELECT 1' >/dev/null 2>&1; then
        psql -U postgres -h 127.0.0.1 -v ON_ERROR_STOP=1 "$@"
    elif [ "$(id -u)" = 0 ] && su postgres -c "psql -tAc 'SELECT 1'" \
            >/dev/null 2>&1; then
        su postgres -c "psql -v ON_ERROR_STOP=1 $(printf '%q ' "$@")"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -u postgres psql -v ON_ERROR_STOP=1 "$@"
    else
        return 1
    fi
}

setup_postgresql() {
    if ! command -v psql >/dev/null 2>&1; then
        echo "test-setup: no psql client; skipping PostgreSQL" >&2
        return 0
    fi
    if ! psql_admin -tAc 'SELECT 1' >/dev/null 2>&1; then
        echo "test-setup: cannot reach PostgreSQL as postgres; skipping" >&2
        return 0
    fi
    psql_admin -tAc "DO \$\$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
            CREATE ROLE $DB_USER LOGIN CREATEDB PASSWORD '$DB_PW';
        ELSE
            ALTER ROLE $DB_USER LOGIN CREATEDB PASSWORD '$DB_PW';
        END IF; END \$\$;" >/dev/null
    if [ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB_USER'")" != 1 ]; then
        psql_admin -tAc "CREATE DATABASE $DB_USER OWNER $DB_USER" >/dev/null
    fi
    echo "test-setup: PostgreSQL role and database $DB_USER ready"
}

# QEMU and the test guest's packages: GUEST_PACKAGES, as_root,
# guest_packages_missing, ensure_guest_packages (shared with the quickstart).
# shellcheck source=tools/guest-packages.sh
source "$(dirname "$0")/guest-packages.sh"
GUEST_DIR=$PWD/.test-guest

setup_test_guest() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "test-setup: no apt-get; skipping QEMU and the test guest" >&2
        return 0
    fi
    if ! ensure_guest_packages; then
        echo "test-setup: cannot install $GUEST_PACKAGES;" \
             "skipping the test guest" >&2
        return 0
    fi
    if ! "$(dirname "$0")/build-test-guest.sh" "$GUEST_DIR" </dev/null; then
        echo "test-setup: building the test guest failed" >&2
        return 0
    fi
    echo "test-setup: test guest in $GUEST_DIR"
}

setup_mysql
setup_postgresql
setup_test_guest
