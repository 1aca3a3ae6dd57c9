//! The control plane's keys and certificates: one CA, the serving cert, client certs, the service-account key.

use std::net::{IpAddr, Ipv4Addr};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

use crate::error::{Error, Result};

/// A PEM certificate with its PEM (PKCS#8) private key.
#[derive(Clone, Debug)]
pub(crate) struct KeyCert {
    pub(crate) cert_pem: String,
    pub(crate) key_pem: String,
}

/// Everything the apiserver and its clients need; the CA key stays here to issue client certs.
pub(crate) struct Pki {
    ca: Issuer<'static, KeyPair>,
    pub(crate) ca_pem: String,
    pub(crate) serving: KeyCert,
    pub(crate) service_account_private_pem: String,
    pub(crate) service_account_public_pem: String,
}

impl Pki {
    /// A fresh CA, a serving cert for `127.0.0.1` and `localhost`, and a service-account key.
    pub(crate) fn generate() -> Result<Pki> {
        let ca_key = key_pair("the CA key")?;
        let mut ca_params = CertificateParams::default();
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "operator-gen envtest ca");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_pem = ca_params
            .self_signed(&ca_key)
            .map_err(cert_error("the CA certificate"))?
            .pem();
        let ca = Issuer::new(ca_params, ca_key);

        let serving_key = key_pair("the serving key")?;
        let mut serving = CertificateParams::default();
        serving
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        serving.subject_alt_names = vec![
            SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            SanType::DnsName(
                "localhost"
                    .try_into()
                    .map_err(cert_error("the serving certificate"))?,
            ),
        ];
        serving.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let serving_pem = serving
            .signed_by(&serving_key, &ca)
            .map_err(cert_error("the serving certificate"))?
            .pem();

        let service_account = key_pair("the service-account signing key")?;
        Ok(Pki {
            ca,
            ca_pem,
            serving: KeyCert {
                cert_pem: serving_pem,
                key_pem: serving_key.serialize_pem(),
            },
            service_account_private_pem: service_account.serialize_pem(),
            service_account_public_pem: service_account.public_key_pem(),
        })
    }

    /// A client certificate the apiserver maps to `user` in `group` (CN and O, as x509 auth reads
    /// them); one group only, since rcgen keeps one value per attribute type.
    pub(crate) fn client_cert(&self, user: &str, group: &str) -> Result<KeyCert> {
        let key = key_pair("a client key")?;
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, user);
        params
            .distinguished_name
            .push(DnType::OrganizationName, group);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert_pem = params
            .signed_by(&key, &self.ca)
            .map_err(cert_error("a client certificate"))?
            .pem();
        Ok(KeyCert {
            cert_pem,
            key_pem: key.serialize_pem(),
        })
    }
}

fn key_pair(what: &'static str) -> Result<KeyPair> {
    KeyPair::generate().map_err(cert_error(what))
}

fn cert_error(what: &'static str) -> impl FnOnce(rcgen::Error) -> Error {
    move |error| Error::Certificate { what, error }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pem_blocks(pem: &str, label: &str) -> usize {
        pem.matches(&format!("-----BEGIN {label}-----")).count()
    }

    #[test]
    fn generates_one_pem_block_per_file() {
        let pki = Pki::generate().expect("pki");
        assert_eq!(pem_blocks(&pki.ca_pem, "CERTIFICATE"), 1);
        assert_eq!(pem_blocks(&pki.serving.cert_pem, "CERTIFICATE"), 1);
        assert_eq!(pem_blocks(&pki.serving.key_pem, "PRIVATE KEY"), 1);
        assert_eq!(
            pem_blocks(&pki.service_account_private_pem, "PRIVATE KEY"),
            1
        );
        assert_eq!(pem_blocks(&pki.service_account_public_pem, "PUBLIC KEY"), 1);
    }

    #[test]
    fn every_control_plane_gets_its_own_ca() {
        let a = Pki::generate().expect("pki");
        let b = Pki::generate().expect("pki");
        assert_ne!(a.ca_pem, b.ca_pem);
        assert_ne!(a.service_account_private_pem, b.service_account_private_pem);
    }

    #[test]
    fn serving_cert_verifies_for_loopback_names_only() {
        use rustls::pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject};

        let pki = Pki::generate().expect("pki");
        let ca = CertificateDer::from_pem_slice(pki.ca_pem.as_bytes()).expect("ca der");
        let leaf =
            CertificateDer::from_pem_slice(pki.serving.cert_pem.as_bytes()).expect("leaf der");
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca).expect("ca is a valid trust anchor");
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let verifier =
            rustls::client::WebPkiServerVerifier::builder_with_provider(roots.into(), provider)
                .build()
                .expect("verifier");
        use rustls::client::danger::ServerCertVerifier;
        let verify = |name: &str| {
            let name = ServerName::try_from(name.to_owned()).expect("server name");
            verifier.verify_server_cert(&leaf, &[], &name, &[], UnixTime::now())
        };
        verify("127.0.0.1").expect("valid for 127.0.0.1");
        verify("localhost").expect("valid for localhost");
        assert!(
            verify("example.com").is_err(),
            "must not be valid for other names"
        );
    }

    #[test]
    fn client_cert_chains_to_the_ca_and_carries_user_and_groups() {
        use rustls::pki_types::{CertificateDer, UnixTime, pem::PemObject};

        let pki = Pki::generate().expect("pki");
        let client = pki.client_cert("alice", "devs").expect("client cert");
        let ca = CertificateDer::from_pem_slice(pki.ca_pem.as_bytes()).expect("ca der");
        let leaf = CertificateDer::from_pem_slice(client.cert_pem.as_bytes()).expect("leaf der");
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca).expect("ca is a valid trust anchor");
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                .build()
                .expect("verifier");
        verifier
            .verify_client_cert(&leaf, &[], UnixTime::now())
            .expect("client cert chains to the ca");

        // the subject is DER: look for the names as UTF8String or PrintableString contents
        let der: &[u8] = leaf.as_ref();
        for name in ["alice", "devs"] {
            assert!(
                der.windows(name.len()).any(|w| w == name.as_bytes()),
                "{name} missing from the client certificate"
            );
        }
    }
}
