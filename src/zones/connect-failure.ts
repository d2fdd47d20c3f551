/**
 * What a zone's failure to reach Global means, in words that say what to change: gRPC's
 * own text ("No connection established. Last error: Error: 80BC…:SSL routines:ssl3_get_record:wrong
 * version number…") names the symptom only. Unknown failures are passed on, trimmed.
 */
export function explainConnectFailure(details: string, globalAddress: string): string {
  const where = globalAddress.replace(/^grpcs?:\/\//, '');
  const syncPort = 'the sync port of a Global (multizone.global.kds.grpcPort, 5685 by default)';
  if (/wrong version number|packet length too long|http request/i.test(details)) {
    return `${where} does not speak TLS: is it ${syncPort}? (TLS error: wrong version number)`;
  }
  if (/no application protocol|Received HTTP status code|Protocol error/i.test(details)) {
    return `${where} is a TLS server but not a gRPC one: point multizone.zone.globalAddress at ${syncPort}`;
  }
  const cause =
    /Last error: (?:Error: )?(.*?)(?:\.? Resolution note:.*)?$/s.exec(details)?.[1]?.trim() ?? details;
  if (/Hostname\/IP does not match|altnames/i.test(details)) {
    return (
      `the certificate of Global at ${where} does not name the address dialled (${cause}): dial a name it ` +
      `holds, or give Global a certificate that names this one (multizone.global.kds.tlsCertFile)`
    );
  }
  if (
    /self[- ]signed certificate|unable to (get local issuer|verify the first) certificate|certificate has expired/i.test(
      details,
    )
  ) {
    return (
      `the certificate of Global at ${where} is not trusted (${cause}): set multizone.zone.kds.rootCaFile ` +
      `(MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE) to the CA that signed it (for a Global's own self-signed ` +
      `certificate: tls/cert.pem in its data dir)`
    );
  }
  if (/ECONNREFUSED/.test(details)) {
    return `nothing listens at ${where}: is Global running, and is this ${syncPort}?`;
  }
  if (/ENOTFOUND|EAI_AGAIN/.test(details)) {
    return `the host of ${where} cannot be resolved: check multizone.zone.globalAddress`;
  }
  return details.replace(/\s*Resolution note:\s*$/, '').replace(/\n/g, ' ');
}
