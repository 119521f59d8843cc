import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface SelfSignedCert {
  key: string;
  cert: string;
  /** The certificate in a file, for WEBHOOK_CA_FILE. */
  certFile: string;
}

/** A throw-away self-signed certificate for `localhost` and 127.0.0.1, made with the system's openssl. */
export function selfSignedCert(): SelfSignedCert {
  const dir = mkdtempSync(path.join(tmpdir(), "webhook-cert-"));
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
    ],
    { stdio: "ignore" },
  );
  const cert = readFileSync(certFile, "utf8");
  writeFileSync(certFile, cert);
  return { key: readFileSync(keyFile, "utf8"), cert, certFile };
}
