"""Key pair material, as Nova's nova/crypto.py makes and checks it:
an ssh public key's fingerprint is the MD5 of its decoded blob (colon
separated), an x509 certificate's the SHA-1 of the certificate; before
2.92 a key pair asked for without a public key is generated here (RSA
2048: the private key PEM for ssh; for x509 a self-signed client
certificate and its key as a base64 PKCS#12, WinRM's shape)."""
import base64
import binascii
import datetime
import hashlib

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.oid import NameOID

from nova_moves import exception

SSH = 'ssh'
X509 = 'x509'
TYPES = (SSH, X509)
# Microsoft's User Principal Name, the WinRM certificate's subjectAltName.
_UPN = x509.ObjectIdentifier('1.3.6.1.4.1.311.20.2.3')


class InvalidKeypair(exception.Invalid):
    msg_fmt = 'Keypair data is invalid: %(reason)s'


def _colons(hexdigest):
    return ':'.join(hexdigest[i:i + 2] for i in range(0, len(hexdigest), 2))


def ssh_fingerprint(public_key):
    try:
        serialization.load_ssh_public_key(public_key.encode('utf-8'))
        blob = base64.b64decode(public_key.split(' ')[1])
    except Exception:
        raise InvalidKeypair(reason='failed to generate fingerprint')
    return _colons(hashlib.md5(blob, usedforsecurity=False).hexdigest())


def x509_fingerprint(pem):
    try:
        cert = x509.load_pem_x509_certificate(pem.encode('utf-8'))
    except (ValueError, TypeError, binascii.Error) as exc:
        raise InvalidKeypair(reason='failed to generate X509 fingerprint. '
                                    'Error message: %s' % exc)
    return _colons(binascii.hexlify(cert.fingerprint(
        hashes.SHA1())).decode('ascii'))


def fingerprint(public_key, key_type):
    if key_type == X509:
        return x509_fingerprint(public_key)
    return ssh_fingerprint(public_key)


def _rsa():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def generate(user_id, key_type):
    """(private_key, public_key, fingerprint) of a new key pair."""
    key = _rsa()
    if key_type == X509:
        return _x509(key, user_id)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption()).decode('ascii')
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH,
        serialization.PublicFormat.OpenSSH).decode('ascii')
    public += ' Generated-by-Nova'
    return private, public, ssh_fingerprint(public)


def _x509(key, user_id):
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, user_id)])
    upn = x509.OtherName(_UPN, _der_utf8('%s@localhost' % user_id))
    cert = (x509.CertificateBuilder()
            .subject_name(name).issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName([upn]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM).decode('ascii')
    bundle = pkcs12.serialize_key_and_certificates(
        None, key, cert, None, serialization.NoEncryption())
    return (base64.b64encode(bundle).decode('ascii'), pem,
            x509_fingerprint(pem))


def _der_utf8(text):
    """A DER UTF8String (tag 12) of ``text``."""
    data = text.encode('utf-8')
    if len(data) < 128:
        return bytes([12, len(data)]) + data
    length = len(data).to_bytes((len(data).bit_length() + 7) // 8, 'big')
    return bytes([12, 0x80 | len(length)]) + length + data
