/*
 * sign.c - ed25519 keys and DSSE envelopes (util.h, "Signing"), through
 * OpenSSL's libcrypto (EVP_PKEY_ED25519, EVP_DigestSign/Verify).
 *
 * Keys are PEM files: the private key as PKCS#8, the public key as
 * SubjectPublicKeyInfo, the forms `openssl genpkey -algorithm ed25519` and
 * `openssl pkey -pubout` write and read. A key id is the SHA-256 of the
 * public key's DER SubjectPublicKeyInfo, in hex (what `openssl pkey -pubin
 * -outform DER | sha256sum` prints).
 *
 * DSSE (the Dead Simple Signing Envelope, v1): the signature is over the
 * pre-authentication encoding PAE(type, payload) = "DSSEv1" SP LEN(type)
 * SP type SP LEN(payload) SP payload, lengths in ASCII decimal; the
 * envelope is the JSON object {"payload": base64, "payloadType": type,
 * "signatures": [{"keyid": id, "sig": base64}]}. Base64 is written in the
 * standard alphabet with padding; a reader takes the standard or the URL
 * alphabet, padded or not, and nothing else.
 *
 * Thread-safe: no shared state.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "util.h"

/* ---- base64 ---- */

int util_base64_encode(const void *data, size_t len, struct buf *out)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = data;
	char q[4];
	size_t i;
	int rc = 0;

	for (i = 0; i + 2 < len && !rc; i += 3) {
		q[0] = abc[p[i] >> 2];
		q[1] = abc[(p[i] & 3) << 4 | p[i + 1] >> 4];
		q[2] = abc[(p[i + 1] & 15) << 2 | p[i + 2] >> 6];
		q[3] = abc[p[i + 2] & 63];
		rc = buf_append(out, q, 4);
	}
	if (!rc && len - i == 1) {
		q[0] = abc[p[i] >> 2];
		q[1] = abc[(p[i] & 3) << 4];
		q[2] = q[3] = '=';
		rc = buf_append(out, q, 4);
	} else if (!rc && len - i == 2) {
		q[0] = abc[p[i] >> 2];
		q[1] = abc[(p[i] & 3) << 4 | p[i + 1] >> 4];
		q[2] = abc[(p[i + 1] & 15) << 2];
		q[3] = '=';
		rc = buf_append(out, q, 4);
	}
	return rc;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

int util_base64_decode(const char *s, size_t len, struct buf *out)
{
	unsigned acc = 0;
	size_t i, n = 0, pad = 0;
	unsigned char byte;
	int v, bits = 0, rc = 0;

	while (pad < 2 && len > 0 && s[len - 1] == '=')
		len--, pad++;
	if (pad && (len + pad) % 4)
		return -EINVAL;
	for (i = 0; i < len && !rc; i++) {
		v = b64_value(s[i]);
		if (v < 0)
			return -EINVAL;
		acc = acc << 6 | (unsigned)v;
		bits += 6;
		n++;
		if (bits >= 8) {
			bits -= 8;
			byte = (unsigned char)(acc >> bits);
			rc = buf_append(out, &byte, 1);
		}
	}
	/* A lone last character, or bits left over that are not zero, is no
	 * encoding of any bytes. */
	if (!rc && (n % 4 == 1 || (acc & ((1u << bits) - 1)) != 0))
		return -EINVAL;
	return rc;
}

/* ---- keys ---- */

/* The key of the PEM file path (private when priv, else public) into
 * *key. 0, -ENOENT or another errno of fopen, -EINVAL (no ed25519 key). */
static int key_load(const char *path, int priv, EVP_PKEY **key)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	*key = priv ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (!*key)
		return -EINVAL;
	if (EVP_PKEY_get_id(*key) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(*key);
		*key = NULL;
		return -EINVAL;
	}
	return 0;
}

/* The public key of key as PEM into out. 0, -ENOMEM. */
static int public_pem(EVP_PKEY *key, struct buf *out)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data;
	long n;
	int rc;

	if (!b)
		return -ENOMEM;
	if (PEM_write_bio_PUBKEY(b, key) != 1) {
		BIO_free(b);
		return -ENOMEM;
	}
	n = BIO_get_mem_data(b, &data);
	rc = buf_append(out, data, (size_t)n);
	BIO_free(b);
	return rc;
}

/* Writes data to a new file path with mode, fsynced. 0, -EEXIST or
 * another negative errno (nothing left behind). */
static int write_new(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode), rc = 0;

	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode))
		rc = -errno;
	if (!rc)
		rc = util_write_all(fd, data, len);
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (rc)
		unlink(path);
	return rc;
}

int sign_key_make(const char *priv_path, const char *pub_path)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *key = NULL;
	BIO *b = NULL;
	struct buf pub = {0};
	char tmp[4096], *data;
	long n;
	int rc = -ENOMEM;

	if (!ctx || EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &key) != 1)
		goto out;
	b = BIO_new(BIO_s_mem());
	if (!b || PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL) != 1)
		goto out;
	rc = public_pem(key, &pub);
	if (rc)
		goto out;
	/* The public key first, then the private key under a temporary name
	 * linked into place: the private key's name never shows a partial
	 * file, and of two makers at once one key wins whole. */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", pub_path, (int)getpid()) >= sizeof(tmp)) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	unlink(tmp);
	rc = write_new(tmp, pub.data, pub.len, 0644);
	if (rc)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", priv_path, (int)getpid());
	unlink(tmp);
	n = BIO_get_mem_data(b, &data);
	rc = write_new(tmp, data, (size_t)n, 0600);
	if (rc)
		goto drop_pub;
	rc = link(tmp, priv_path) ? -errno : 0;
	unlink(tmp);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", pub_path, (int)getpid());
	if (rc == 0) {
		rc = rename(tmp, pub_path) ? -errno : 0;
		if (rc)
			unlink(priv_path);
	}
drop_pub:
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", pub_path, (int)getpid());
	unlink(tmp);
out:
	buf_free(&pub);
	BIO_free(b);
	EVP_PKEY_free(key);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

int sign_key_public(const char *priv_path, struct buf *pem)
{
	EVP_PKEY *key;
	int rc = key_load(priv_path, 1, &key);

	if (rc)
		return rc;
	rc = public_pem(key, pem);
	EVP_PKEY_free(key);
	return rc;
}

/* The key id of key into hex[65]. 0 or -ENOMEM. */
static int key_id(EVP_PKEY *key, char hex[65])
{
	unsigned char *der = NULL;
	int n = i2d_PUBKEY(key, &der);

	if (n <= 0)
		return -ENOMEM;
	util_sha256_hex(der, (size_t)n, hex);
	OPENSSL_free(der);
	return 0;
}

int sign_keyid(const char *pem, size_t len, char hex[65])
{
	BIO *b = BIO_new_mem_buf(pem, (int)len);
	EVP_PKEY *key = b ? PEM_read_bio_PUBKEY(b, NULL, NULL, NULL) : NULL;
	int rc;

	BIO_free(b);
	if (!key || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(key);
		return -EINVAL;
	}
	rc = key_id(key, hex);
	EVP_PKEY_free(key);
	return rc;
}

/* ---- DSSE ---- */

int dsse_pae(const char *type, const void *payload, size_t len, struct buf *out)
{
	int rc = buf_printf(out, "DSSEv1 %zu %s %zu ", strlen(type), type, len);

	return rc ? rc : buf_append(out, payload, len);
}

int dsse_sign(const char *priv_path, const char *type, const void *payload, size_t len,
	      struct buf *out)
{
	EVP_MD_CTX *md = NULL;
	EVP_PKEY *key = NULL;
	struct buf pae = {0}, b64 = {0}, sig64 = {0};
	unsigned char sig[64];
	size_t siglen = sizeof(sig);
	char keyid[65];
	cJSON *env = NULL, *sigs, *one;
	char *text;
	int rc = key_load(priv_path, 1, &key);

	if (rc)
		return rc;
	rc = key_id(key, keyid);
	rc = rc ? rc : dsse_pae(type, payload, len, &pae);
	if (rc)
		goto out;
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, NULL, NULL, key) != 1 ||
	    EVP_DigestSign(md, sig, &siglen, (const unsigned char *)pae.data, pae.len) != 1) {
		rc = -ENOMEM;
		goto out;
	}
	rc = util_base64_encode(payload, len, &b64);
	rc = rc ? rc : util_base64_encode(sig, siglen, &sig64);
	if (rc)
		goto out;
	rc = -ENOMEM;
	env = cJSON_CreateObject();
	if (!env || !cJSON_AddStringToObject(env, "payloadType", type) ||
	    !cJSON_AddStringToObject(env, "payload", b64.data ? b64.data : "") ||
	    !(sigs = cJSON_AddArrayToObject(env, "signatures")) || !(one = cJSON_CreateObject()))
		goto out;
	cJSON_AddItemToArray(sigs, one);
	if (!cJSON_AddStringToObject(one, "keyid", keyid) ||
	    !cJSON_AddStringToObject(one, "sig", sig64.data ? sig64.data : ""))
		goto out;
	text = cJSON_Print(env);
	if (!text)
		goto out;
	rc = buf_printf(out, "%s\n", text);
	free(text);
out:
	cJSON_Delete(env);
	buf_free(&pae);
	buf_free(&b64);
	buf_free(&sig64);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	return rc;
}

static int why_set(char *why, size_t size, int rc, const char *fmt, const char *arg)
{
	if (why && size)
		snprintf(why, size, fmt, arg);
	return rc;
}

int dsse_verify(const char *env_text, size_t len, const char *pub_pem, size_t publen,
		char **type, struct buf *payload, char *why, size_t whylen)
{
	cJSON *env = cJSON_ParseWithLength(env_text, len), *t, *p, *sigs, *s;
	BIO *b = NULL;
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	struct buf pae = {0}, sig = {0}, body = {0};
	char keyid[65];
	int rc, n = 0, ok = 0;

	if (!cJSON_IsObject(env)) {
		rc = why_set(why, whylen, -EINVAL, "%s", "not a JSON object");
		goto out;
	}
	t = cJSON_GetObjectItemCaseSensitive(env, "payloadType");
	p = cJSON_GetObjectItemCaseSensitive(env, "payload");
	sigs = cJSON_GetObjectItemCaseSensitive(env, "signatures");
	rc = -EINVAL;
	if (!cJSON_IsString(t) || !cJSON_IsString(p)) {
		why_set(why, whylen, rc, "%s", "payloadType and payload must be strings");
		goto out;
	}
	if (!cJSON_IsArray(sigs) || cJSON_GetArraySize(sigs) == 0) {
		why_set(why, whylen, rc, "%s", "signatures must be a non-empty array");
		goto out;
	}
	if (util_base64_decode(p->valuestring, strlen(p->valuestring), &body)) {
		why_set(why, whylen, rc, "%s", "payload is not base64");
		goto out;
	}
	b = BIO_new_mem_buf(pub_pem, (int)publen);
	key = b ? PEM_read_bio_PUBKEY(b, NULL, NULL, NULL) : NULL;
	if (!key || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
		why_set(why, whylen, rc, "%s", "the key is not an ed25519 public key (PEM)");
		goto out;
	}
	rc = key_id(key, keyid);
	rc = rc ? rc : dsse_pae(t->valuestring, body.data ? body.data : "", body.len, &pae);
	if (rc)
		goto out;
	rc = -EINVAL;
	cJSON_ArrayForEach(s, sigs) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "sig");

		if (!cJSON_IsString(v)) {
			why_set(why, whylen, rc, "%s", "a signature has no sig string");
			goto out;
		}
		sig.len = 0;
		if (util_base64_decode(v->valuestring, strlen(v->valuestring), &sig)) {
			why_set(why, whylen, rc, "%s", "a signature is not base64");
			goto out;
		}
		n++;
		EVP_MD_CTX_free(md);
		md = EVP_MD_CTX_new();
		if (!md) {
			rc = -ENOMEM;
			goto out;
		}
		if (EVP_DigestVerifyInit(md, NULL, NULL, NULL, key) == 1 &&
		    EVP_DigestVerify(md, (const unsigned char *)sig.data, sig.len,
				     (const unsigned char *)pae.data, pae.len) == 1)
			ok = 1;
	}
	if (!ok) {
		rc = why_set(why, whylen, -EBADMSG,
			     "no signature verifies with the key %.16s... (the payload or the "
			     "signature was changed, or another key signed)", keyid);
		goto out;
	}
	*type = strdup(t->valuestring);
	if (!*type) {
		rc = -ENOMEM;
		goto out;
	}
	rc = buf_append(payload, body.data ? body.data : "", body.len);
out:
	cJSON_Delete(env);
	BIO_free(b);
	EVP_PKEY_free(key);
	EVP_MD_CTX_free(md);
	buf_free(&pae);
	buf_free(&sig);
	buf_free(&body);
	return rc;
}
