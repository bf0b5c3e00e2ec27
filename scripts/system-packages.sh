#!/bin/sh
# The Debian packages the tests need, installed when missing (make test calls this every time:
# when everything is there it is one dpkg-query, a few milliseconds).
#   chromium                                the browser tests drive Debian's Chromium
#   gcc-avr avr-libc arduino-core-avr arduino-mk simavr libsimavr-dev libelf-dev gcc make
#                                           the panel firmware is compiled for the Uno and the
#                                           Mega and run in simavr
#   postgresql                              the store's tests run against a real PostgreSQL server
#   redis-server                            the web game's rooms shared between server processes
#   openssl                                 a certificate for the test of Redis over TLS
# As root it runs apt-get; otherwise sudo -n apt-get if sudo needs no password; otherwise it
# stops, printing the command to run, before any test starts.
set -eu

PACKAGES="chromium make gcc gcc-avr avr-libc arduino-core-avr arduino-mk simavr libsimavr-dev libelf-dev"
PACKAGES="$PACKAGES postgresql redis-server openssl"

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "noughts: the tests need Debian's packages ($PACKAGES) and this system has no dpkg;" >&2
    echo "install their equivalents, then run the tests with: make test SYSTEM_PACKAGES=skip" >&2
    exit 1
fi

# shellcheck disable=SC2086  # one word per package
installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' $PACKAGES 2>/dev/null || true)
missing=""
for package in $PACKAGES; do
    echo "$installed" | grep -qx "$package installed" || missing="$missing $package"
done
[ -z "$missing" ] && exit 0
missing=${missing# }

# Wait for another apt-get or dpkg instead of failing on its lock.
APT="apt-get -o DPkg::Lock::Timeout=600 -y -qq"
if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "noughts: the tests need Debian packages that are not installed: $missing" >&2
    echo "Install them with this command, then run make test again:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y $missing" >&2
    exit 1
fi

echo "Installing the Debian packages the tests need: $missing"
$SUDO env DEBIAN_FRONTEND=noninteractive $APT update
# shellcheck disable=SC2086  # one word per package
$SUDO env DEBIAN_FRONTEND=noninteractive $APT install $missing
