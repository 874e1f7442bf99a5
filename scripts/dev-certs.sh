#!/usr/bin/env bash
# Makes a throwaway CA, a server certificate for the coordinator (localhost, 127.0.0.1 and the
# names given) and a client certificate for mutual TLS, with openssl, into DIR (default certs/).
# For tests and for trying TLS; a real cluster uses its own CA (e.g. cert-manager).
# Usage: scripts/dev-certs.sh [DIR] [EXTRA_DNS_NAME...]
#   -> DIR/ca.pem ca.key server.pem server.key client.pem client.key
set -euo pipefail
dir="${1:-certs}"
shift || true
mkdir -p "$dir"
cd "$dir"
san="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do san="$san,DNS:$name"; done
umask 077
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=arbiter dev CA" \
  -keyout ca.key -out ca.pem 2>/dev/null
issue() {  # issue NAME CN EXTENSIONS
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
issue server "arbiter coordinator" "subjectAltName=$san
extendedKeyUsage=serverAuth"
issue client "arbiter worker" "extendedKeyUsage=clientAuth"
rm -f ca.srl
chmod 644 ca.pem server.pem client.pem
echo "$PWD: ca.pem server.pem server.key client.pem client.key"
