/**
 * The protobuf decoder on bodies kubectl 1.35.2 sent, recorded once from a proxy in front
 * of LocalCluster: each reads into the object a JSON body of the same object would carry.
 */
import { describe, expect, it } from "vitest"
import { decodeProtobufDeleteOptions, decodeProtobufObject } from "../../src/internal/protobufObjects.js"

const hex = (text: string) => Buffer.from(text, "hex")

/** `kubectl create serviceaccount runner -n ns1` */
const SERVICE_ACCOUNT = hex(
  "6b3873000a140a027631120e536572766963654163636f756e74121b0a190a0672756e6e657212001a036e733122002a003200380042001a002200"
)
/** `kubectl create namespace other` */
const NAMESPACE = hex(
  "6b3873000a0f0a02763112094e616d657370616365121d0a150a056f7468657212001a0022002a0032003800420012001a020a001a002200"
)
/** `kubectl create clusterrole cr --verb=get --resource=services --non-resource-url=/x` */
const CLUSTER_ROLE = hex(
  "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c6512320a120a02637212001a0022002a0032003800420012110a0367657412001a08736572766963657312090a036765742a022f781a002200"
)
/** `kubectl create clusterrole agg --aggregation-rule=foo=bar` */
const AGGREGATED_ROLE = hex(
  "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c6512250a130a0361676712001a0022002a003200380042001a0e0a0c0a0a0a03666f6f12036261721a002200"
)
/** `kubectl create rolebinding rb -n ns1 --role=session-routing --serviceaccount=ns1:runner --user=alice --group=devs` */
const ROLE_BINDING = hex(
  "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b526f6c6542696e64696e6712c4010a150a02726212001a036e733122002a00320038004200122a0a04557365721219726261632e617574686f72697a6174696f6e2e6b38732e696f1a05616c6963652200122a0a0547726f75701219726261632e617574686f72697a6174696f6e2e6b38732e696f1a04646576732200121f0a0e536572766963654163636f756e7412001a0672756e6e657222036e73311a320a19726261632e617574686f72697a6174696f6e2e6b38732e696f1204526f6c651a0f73657373696f6e2d726f7574696e671a002200"
)
/** `kubectl create service nodeport svc2 -n ns1 --tcp=80:http` */
const NODE_PORT_SERVICE = hex(
  "6b3873000a0d0a02763112075365727669636512710a240a047376633212001a036e733122002a003200380042005a0b0a0361707012047376633212450a1e0a0738302d6874747012035443501850220a080110001a04687474702800120b0a036170701204737663321a0022084e6f6465506f72743a00420052005a00600068001a020a001a002200"
)
/** `kubectl create service clusterip svc1 -n ns1 --tcp=80:8080` */
const CLUSTER_IP_SERVICE = hex(
  "6b3873000a0d0a027631120753657276696365126f0a240a047376633112001a036e733122002a003200380042005a0b0a0361707012047376633112430a1b0a0738302d38303830120354435018502207080010903f1a002800120b0a036170701204737663311a002209436c757374657249503a00420052005a00600068001a020a001a002200"
)
/**
 * `kubectl create ingress ing -n ns1 --rule=foo.com/bar*=svc1:http,tls=my-cert --rule=/x=svc2:80
 * --class=nginx --annotation=a=b --default-backend=svc1:80`
 */
const INGRESS = hex(
  "6b3873000a1f0a146e6574776f726b696e672e6b38732e696f2f76311207496e677265737312aa010a1e0a03696e6712001a036e733122002a0032003800420062060a01611201621283010a0e220c0a047376633112040a00105012120a07666f6f2e636f6d12076d792d636572741a310a07666f6f2e636f6d12260a240a220a042f626172121222100a047376633112080a046874747010001a065072656669781a230a00121f0a1d0a1b0a022f78120e220c0a047376633212040a0010501a05457861637422056e67696e781a020a001a002200"
)
/** What `kubectl auth reconcile` sent to delete a RoleBinding it re-creates: DeleteOptions with a uid precondition. */
const DELETE_OPTIONS = hex(
  "6b3873000a2d0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120d44656c6574654f7074696f6e73122812260a2432343032343732622d666337392d346238652d386233372d6563623938343665303131381a002200"
)

const RBAC = "rbac.authorization.k8s.io"

describe("reading kubectl's protobuf objects", () => {
  it("reads a ServiceAccount and a Namespace, leaving out the empty fields kubectl sends", () => {
    expect(decodeProtobufObject(SERVICE_ACCOUNT)).toEqual({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "runner", namespace: "ns1" }
    })
    // The empty spec is a struct Go writes anyway; the status (phase "") is the server's.
    expect(decodeProtobufObject(NAMESPACE)).toEqual({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "other" },
      spec: {}
    })
  })

  it("reads a ClusterRole's resource and non-resource rules, and an aggregation rule's selectors", () => {
    expect(decodeProtobufObject(CLUSTER_ROLE)).toEqual({
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRole",
      metadata: { name: "cr" },
      rules: [
        { verbs: ["get"], apiGroups: [""], resources: ["services"] },
        { verbs: ["get"], nonResourceURLs: ["/x"] }
      ]
    })
    expect(decodeProtobufObject(AGGREGATED_ROLE)).toEqual({
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRole",
      metadata: { name: "agg" },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { foo: "bar" } }] }
    })
  })

  it("reads a RoleBinding's subjects in order and its roleRef", () => {
    expect(decodeProtobufObject(ROLE_BINDING)).toEqual({
      apiVersion: `${RBAC}/v1`,
      kind: "RoleBinding",
      metadata: { name: "rb", namespace: "ns1" },
      subjects: [
        { kind: "User", apiGroup: RBAC, name: "alice" },
        { kind: "Group", apiGroup: RBAC, name: "devs" },
        { kind: "ServiceAccount", name: "runner", namespace: "ns1" }
      ],
      roleRef: { apiGroup: RBAC, kind: "Role", name: "session-routing" }
    })
  })

  it("reads a Service's ports with a numeric and a named targetPort, its selector and type", () => {
    expect(decodeProtobufObject(CLUSTER_IP_SERVICE)).toEqual({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "svc1", namespace: "ns1", labels: { app: "svc1" } },
      spec: {
        ports: [{ name: "80-8080", protocol: "TCP", port: 80, targetPort: 8080 }],
        selector: { app: "svc1" },
        type: "ClusterIP"
      }
    })
    expect(decodeProtobufObject(NODE_PORT_SERVICE)).toMatchObject({
      spec: { ports: [{ name: "80-http", protocol: "TCP", port: 80, targetPort: "http" }], type: "NodePort" }
    })
  })

  it("reads an Ingress: class, annotations, default backend, TLS, and rules with their http paths inline", () => {
    const service = (name: string, port: Record<string, unknown>) => ({ service: { name, port } })
    expect(decodeProtobufObject(INGRESS)).toEqual({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "ing", namespace: "ns1", annotations: { a: "b" } },
      spec: {
        ingressClassName: "nginx",
        defaultBackend: service("svc1", { number: 80 }),
        tls: [{ hosts: ["foo.com"], secretName: "my-cert" }],
        rules: [
          {
            host: "foo.com",
            http: { paths: [{ path: "/bar", pathType: "Prefix", backend: service("svc1", { name: "http" }) }] }
          },
          { http: { paths: [{ path: "/x", pathType: "Exact", backend: service("svc2", { number: 80 }) }] } }
        ]
      }
    })
  })

  it("reads DeleteOptions with a uid precondition", () => {
    expect(decodeProtobufDeleteOptions(DELETE_OPTIONS)).toEqual({
      preconditions: { uid: "2402472b-fc79-4b8e-8b37-ecb9846e0118" }
    })
    expect(() => decodeProtobufDeleteOptions(SERVICE_ACCOUNT)).toThrow(/expected DeleteOptions/)
  })

  it("has no object for a type it has no schema for, and throws on bytes that are not protobuf", () => {
    // A Pod, as kubectl's typed client would send one: the envelope names a type with no schema here.
    const pod = Buffer.concat([hex("6b3873000a0d0a0276311207506f64"), hex("12021a00")])
    expect(decodeProtobufObject(pod)).toBeUndefined()
    expect(() => decodeProtobufObject(Buffer.from("{}"))).toThrow(/does not appear to be a protobuf message/)
    // Cut short inside the ServiceAccount's metadata.
    expect(() => decodeProtobufObject(SERVICE_ACCOUNT.subarray(0, 30))).toThrow(/truncated/)
  })
})
