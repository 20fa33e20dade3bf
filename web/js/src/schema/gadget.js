import * as $ from "capnp-es";
import { Gatekeeper, Gatekeeper$Client } from "./gatekeeper.js";
const _capnpFileId = 0xd662438f78e9d48dn;
const Role = {
  /**
  * May open sessions and see the UI.
  *
  */
  VIEWER: 0,
  /**
  * May also read the gadget's log (`Gadget.logs`).
  *
  */
  EDITOR: 1,
  /**
  * Full control. The creator of a gadget is its owner; a user it is shared
  * with as owner may do everything but remove it.
  *
  */
  OWNER: 2
};
class Caller extends $.Struct {
  static _capnp = {
    displayName: "Caller",
    id: "bd2d73c13152e8c6",
    size: new $.ObjectSize(8, 3)
  };
  /**
  * The caller as this gadget knows them: a pseudonym, stable for one user
  * in this gadget (key a user's data by it), different in every other
  * gadget, and never the user's internal id.
  *
  */
  get userId() {
    return $.utils.getText(0, this);
  }
  set userId(value) {
    $.utils.setText(0, value, this);
  }
  /**
  * Human-readable login name, for display only.
  *
  */
  get userName() {
    return $.utils.getText(1, this);
  }
  set userName(value) {
    $.utils.setText(1, value, this);
  }
  /**
  * The caller's role on this gadget when the session was opened. The
  * session ends (its calls and its context's fail, disconnected) if the
  * caller's role drops below it or their share is revoked, so a guest may
  * rely on it for the session's life.
  *
  */
  get role() {
    return $.utils.getUint16(0, this);
  }
  set role(value) {
    $.utils.setUint16(0, value, this);
  }
  _adoptPermissions(value) {
    $.utils.adopt(value, $.utils.getPointer(2, this));
  }
  _disownPermissions() {
    return $.utils.disown(this.permissions);
  }
  /**
  * The blueprint's own permissions (blueprint.json's "permissions") that
  * `role` bundles (its "roles"), by name, in the order the manifest
  * declares them: an owner has every one. Check the names you need, e.g.
  * "edit" before changing a note. Empty for a blueprint that declares
  * none: such a guest decides by `role` alone. The platform computes the
  * set; enforcing it is the guest's job (docs/SECURITY.md).
  *
  */
  get permissions() {
    return $.utils.getList(2, $.TextList, this);
  }
  _hasPermissions() {
    return !$.utils.isNull($.utils.getPointer(2, this));
  }
  _initPermissions(length) {
    return $.utils.initList(2, $.TextList, length, this);
  }
  set permissions(value) {
    $.utils.copyFrom(value, $.utils.getPointer(2, this));
  }
  toString() {
    return "Caller_" + super.toString();
  }
}
class Guest_Open$Params extends $.Struct {
  static _capnp = {
    displayName: "open$Params",
    id: "ba33a05694582fe3",
    size: new $.ObjectSize(0, 2)
  };
  _adoptCaller(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownCaller() {
    return $.utils.disown(this.caller);
  }
  get caller() {
    return $.utils.getStruct(0, Caller, this);
  }
  _hasCaller() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initCaller() {
    return $.utils.initStructAt(0, Caller, this);
  }
  set caller(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  get context() {
    return new SessionContext$Client($.utils.getInterfaceClientOrNullAt(1, this));
  }
  set context(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(1, this));
  }
  toString() {
    return "Guest_Open$Params_" + super.toString();
  }
}
class Guest_Open$Results extends $.Struct {
  static _capnp = {
    displayName: "open$Results",
    id: "bc6c4a358e35d5f9",
    size: new $.ObjectSize(0, 1)
  };
  _adoptSession(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownSession() {
    return $.utils.disown(this.session);
  }
  get session() {
    return $.utils.getPointer(0, this);
  }
  _hasSession() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  set session(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Guest_Open$Results_" + super.toString();
  }
}
class Guest_Open$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Guest$Client {
  client;
  static interfaceId = 0x90c9de78f29a64f4n;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: Guest_Open$Params,
      ResultsClass: Guest_Open$Results,
      interfaceId: Guest$Client.interfaceId,
      methodId: 0,
      interfaceName: "gadget.capnp:Guest",
      methodName: "open"
    }
  ];
  /**
  * Opens a session for `caller`. The session's interface is the one the
  * blueprint's manifest names (for example `Counter` in examples/counter);
  * clients cast it to their generated type or drive it dynamically with
  * `Gadget.schema()`.
  *
  * `context` is this one session's way back to the platform. Keep it (add
  * a reference) for as long as the session lives and release it when the
  * session ends. When the host reopens a session on a fresh instance (the
  * old one was evicted or crashed), it calls open again with the same
  * caller and the same context.
  *
  */
  open(paramsFunc) {
    const answer = this.client.call({
      method: Guest$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Guest_Open$Results, answer);
    return new Guest_Open$Results$Promise(pipeline);
  }
}
$.Registry.register(Guest$Client.interfaceId, Guest$Client);
class Guest$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...Guest$Client.methods[0],
        impl: target.open
      }
    ]);
    this.target = target;
  }
  client() {
    return new Guest$Client(this);
  }
}
class Guest extends $.Interface {
  static Client = Guest$Client;
  static Server = Guest$Server;
  static _capnp = {
    displayName: "Guest",
    id: "90c9de78f29a64f4",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Guest_" + super.toString();
  }
}
class SessionContext_Caller$Params extends $.Struct {
  static _capnp = {
    displayName: "caller$Params",
    id: "d794890d270743bd",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "SessionContext_Caller$Params_" + super.toString();
  }
}
class SessionContext_Caller$Results extends $.Struct {
  static _capnp = {
    displayName: "caller$Results",
    id: "84115a12c9dd285f",
    size: new $.ObjectSize(0, 1)
  };
  _adoptCaller(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownCaller() {
    return $.utils.disown(this.caller);
  }
  get caller() {
    return $.utils.getStruct(0, Caller, this);
  }
  _hasCaller() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initCaller() {
    return $.utils.initStructAt(0, Caller, this);
  }
  set caller(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "SessionContext_Caller$Results_" + super.toString();
  }
}
class SessionContext_Caller$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class SessionContext_Present$Params extends $.Struct {
  static _capnp = {
    displayName: "present$Params",
    id: "9a12705e5ca0702c",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "SessionContext_Present$Params_" + super.toString();
  }
}
class SessionContext_Present$Results extends $.Struct {
  static _capnp = {
    displayName: "present$Results",
    id: "93b1592e8f9a14e0",
    size: new $.ObjectSize(0, 1)
  };
  static _Present;
  _adoptPresent(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownPresent() {
    return $.utils.disown(this.present);
  }
  get present() {
    return $.utils.getList(0, SessionContext_Present$Results._Present, this);
  }
  _hasPresent() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initPresent(length) {
    return $.utils.initList(0, SessionContext_Present$Results._Present, length, this);
  }
  set present(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "SessionContext_Present$Results_" + super.toString();
  }
}
class SessionContext_Present$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class SessionContext$Client {
  client;
  static interfaceId = 0xa315464f654b1e3cn;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: SessionContext_Caller$Params,
      ResultsClass: SessionContext_Caller$Results,
      interfaceId: SessionContext$Client.interfaceId,
      methodId: 0,
      interfaceName: "gadget.capnp:SessionContext",
      methodName: "caller"
    },
    {
      ParamsClass: SessionContext_Present$Params,
      ResultsClass: SessionContext_Present$Results,
      interfaceId: SessionContext$Client.interfaceId,
      methodId: 1,
      interfaceName: "gadget.capnp:SessionContext",
      methodName: "present"
    }
  ];
  /**
  * Who the session belongs to, checked now rather than remembered from
  * open: the same Caller open received while the session's credential is
  * valid and the caller may still use the gadget; an error once that is no
  * longer so (disconnected for a revoked or expired token). A guest that
  * keeps a long-lived session (or acts on a user's behalf later) asks
  * before it trusts the caller again.
  *
  */
  caller(paramsFunc) {
    const answer = this.client.call({
      method: SessionContext$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(SessionContext_Caller$Results, answer);
    return new SessionContext_Caller$Results$Promise(pipeline);
  }
  /**
  * Who has a session open on this gadget now, the session's own caller
  * included: one entry per user (their highest role among their
  * sessions), ordered by when that user's oldest open session began, each
  * as this gadget knows them (Caller.userId is the same pseudonym that
  * user's own sessions see). Guarded as `caller` is.
  *
  */
  present(paramsFunc) {
    const answer = this.client.call({
      method: SessionContext$Client.methods[1],
      paramsFunc
    });
    const pipeline = new $.Pipeline(SessionContext_Present$Results, answer);
    return new SessionContext_Present$Results$Promise(pipeline);
  }
}
$.Registry.register(SessionContext$Client.interfaceId, SessionContext$Client);
class SessionContext$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...SessionContext$Client.methods[0],
        impl: target.caller
      },
      {
        ...SessionContext$Client.methods[1],
        impl: target.present
      }
    ]);
    this.target = target;
  }
  client() {
    return new SessionContext$Client(this);
  }
}
class SessionContext extends $.Interface {
  static Client = SessionContext$Client;
  static Server = SessionContext$Server;
  static _capnp = {
    displayName: "SessionContext",
    id: "a315464f654b1e3c",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "SessionContext_" + super.toString();
  }
}
class Host_Storage$Params extends $.Struct {
  static _capnp = {
    displayName: "storage$Params",
    id: "e0d11712ba26c839",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Host_Storage$Params_" + super.toString();
  }
}
class Host_Storage$Results extends $.Struct {
  static _capnp = {
    displayName: "storage$Results",
    id: "cc26a9fad2d726f8",
    size: new $.ObjectSize(0, 1)
  };
  get storage() {
    return new Storage$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set storage(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  toString() {
    return "Host_Storage$Results_" + super.toString();
  }
}
class Host_Storage$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  getStorage() {
    return new Storage$Client(this.pipeline.getPipeline(Storage, 0).client());
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Host_Log$Params extends $.Struct {
  static _capnp = {
    displayName: "log$Params",
    id: "9d544cd314b91dc6",
    size: new $.ObjectSize(8, 1)
  };
  get level() {
    return $.utils.getUint16(0, this);
  }
  set level(value) {
    $.utils.setUint16(0, value, this);
  }
  get text() {
    return $.utils.getText(0, this);
  }
  set text(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Host_Log$Params_" + super.toString();
  }
}
class Host_Log$Results extends $.Struct {
  static _capnp = {
    displayName: "log$Results",
    id: "faa1e9d6731ea390",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Host_Log$Results_" + super.toString();
  }
}
class Host_Log$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Host_Gatekeeper$Params extends $.Struct {
  static _capnp = {
    displayName: "gatekeeper$Params",
    id: "d17881fd38e52343",
    size: new $.ObjectSize(0, 1)
  };
  get name() {
    return $.utils.getText(0, this);
  }
  set name(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Host_Gatekeeper$Params_" + super.toString();
  }
}
class Host_Gatekeeper$Results extends $.Struct {
  static _capnp = {
    displayName: "gatekeeper$Results",
    id: "b2a1e01b50302f3b",
    size: new $.ObjectSize(0, 1)
  };
  get gatekeeper() {
    return new Gatekeeper$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set gatekeeper(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  toString() {
    return "Host_Gatekeeper$Results_" + super.toString();
  }
}
class Host_Gatekeeper$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  getGatekeeper() {
    return new Gatekeeper$Client(this.pipeline.getPipeline(Gatekeeper, 0).client());
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Host$Client {
  client;
  static interfaceId = 0xa029bcbe81514bf0n;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: Host_Storage$Params,
      ResultsClass: Host_Storage$Results,
      interfaceId: Host$Client.interfaceId,
      methodId: 0,
      interfaceName: "gadget.capnp:Host",
      methodName: "storage"
    },
    {
      ParamsClass: Host_Log$Params,
      ResultsClass: Host_Log$Results,
      interfaceId: Host$Client.interfaceId,
      methodId: 1,
      interfaceName: "gadget.capnp:Host",
      methodName: "log"
    },
    {
      ParamsClass: Host_Gatekeeper$Params,
      ResultsClass: Host_Gatekeeper$Results,
      interfaceId: Host$Client.interfaceId,
      methodId: 2,
      interfaceName: "gadget.capnp:Host",
      methodName: "gatekeeper"
    }
  ];
  /**
  * The gadget's private, durable key-value store. See Storage for limits and
  * transaction semantics. The capability stays valid for the life of the
  * instance: keep it rather than asking again (the Go SDK's guest.Storage
  * does), which saves a round trip across the sandbox boundary per use.
  *
  */
  storage(paramsFunc) {
    const answer = this.client.call({
      method: Host$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Host_Storage$Results, answer);
    return new Host_Storage$Results$Promise(pipeline);
  }
  /**
  * Appends a line to the gadget's log, which its owner reads with
  * `Gadget.logs()`. Long messages are truncated; a flood is rate limited.
  *
  */
  log(paramsFunc) {
    const answer = this.client.call({
      method: Host$Client.methods[1],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Host_Log$Results, answer);
    return new Host_Log$Results$Promise(pipeline);
  }
  /**
  * The gatekeeper bound to this gadget under `name` (`Gadget.bind`): its
  * only way out of the sandbox. Its interface is its kind's, which extends
  * Gatekeeper. Every call is written to the owner's audit log, and an
  * action is answered with a simulated result and waits for the owner's
  * approval. A name that is not bound fails with "no such binding",
  * whether it never was or was unbound; after `unbind` every reference
  * fails, also one the gadget kept.
  *
  */
  gatekeeper(paramsFunc) {
    const answer = this.client.call({
      method: Host$Client.methods[2],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Host_Gatekeeper$Results, answer);
    return new Host_Gatekeeper$Results$Promise(pipeline);
  }
}
$.Registry.register(Host$Client.interfaceId, Host$Client);
class Host$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...Host$Client.methods[0],
        impl: target.storage
      },
      {
        ...Host$Client.methods[1],
        impl: target.log
      },
      {
        ...Host$Client.methods[2],
        impl: target.gatekeeper
      }
    ]);
    this.target = target;
  }
  client() {
    return new Host$Client(this);
  }
}
class Host extends $.Interface {
  static Client = Host$Client;
  static Server = Host$Server;
  static _capnp = {
    displayName: "Host",
    id: "a029bcbe81514bf0",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Host_" + super.toString();
  }
}
const LogLevel = {
  DEBUG: 0,
  INFO: 1,
  WARN: 2,
  ERROR: 3
};
class Storage_Entry extends $.Struct {
  static _capnp = {
    displayName: "Entry",
    id: "f167beee8184d93a",
    size: new $.ObjectSize(0, 2)
  };
  get key() {
    return $.utils.getText(0, this);
  }
  set key(value) {
    $.utils.setText(0, value, this);
  }
  _adoptValue(value) {
    $.utils.adopt(value, $.utils.getPointer(1, this));
  }
  _disownValue() {
    return $.utils.disown(this.value);
  }
  get value() {
    return $.utils.getData(1, this);
  }
  _hasValue() {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initValue(length) {
    return $.utils.initData(1, length, this);
  }
  set value(value) {
    $.utils.copyFrom(value, $.utils.getPointer(1, this));
  }
  toString() {
    return "Storage_Entry_" + super.toString();
  }
}
class Storage_Get$Params extends $.Struct {
  static _capnp = {
    displayName: "get$Params",
    id: "b3b4a7521db13ff3",
    size: new $.ObjectSize(0, 1)
  };
  get key() {
    return $.utils.getText(0, this);
  }
  set key(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Storage_Get$Params_" + super.toString();
  }
}
class Storage_Get$Results extends $.Struct {
  static _capnp = {
    displayName: "get$Results",
    id: "83b468a905937a46",
    size: new $.ObjectSize(8, 1)
  };
  _adoptValue(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownValue() {
    return $.utils.disown(this.value);
  }
  get value() {
    return $.utils.getData(0, this);
  }
  _hasValue() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initValue(length) {
    return $.utils.initData(0, length, this);
  }
  set value(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  get found() {
    return $.utils.getBit(0, this);
  }
  set found(value) {
    $.utils.setBit(0, value, this);
  }
  toString() {
    return "Storage_Get$Results_" + super.toString();
  }
}
class Storage_Get$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Storage_Put$Params extends $.Struct {
  static _capnp = {
    displayName: "put$Params",
    id: "b33180abb992830e",
    size: new $.ObjectSize(0, 2)
  };
  get key() {
    return $.utils.getText(0, this);
  }
  set key(value) {
    $.utils.setText(0, value, this);
  }
  _adoptValue(value) {
    $.utils.adopt(value, $.utils.getPointer(1, this));
  }
  _disownValue() {
    return $.utils.disown(this.value);
  }
  get value() {
    return $.utils.getData(1, this);
  }
  _hasValue() {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initValue(length) {
    return $.utils.initData(1, length, this);
  }
  set value(value) {
    $.utils.copyFrom(value, $.utils.getPointer(1, this));
  }
  toString() {
    return "Storage_Put$Params_" + super.toString();
  }
}
class Storage_Put$Results extends $.Struct {
  static _capnp = {
    displayName: "put$Results",
    id: "9988e40c7a9a8b5f",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Storage_Put$Results_" + super.toString();
  }
}
class Storage_Put$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Storage_Delete$Params extends $.Struct {
  static _capnp = {
    displayName: "delete$Params",
    id: "ceea5fc0de09d659",
    size: new $.ObjectSize(0, 1)
  };
  get key() {
    return $.utils.getText(0, this);
  }
  set key(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Storage_Delete$Params_" + super.toString();
  }
}
class Storage_Delete$Results extends $.Struct {
  static _capnp = {
    displayName: "delete$Results",
    id: "8ac82f7fd63ed8ff",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Storage_Delete$Results_" + super.toString();
  }
}
class Storage_Delete$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Storage_List$Params extends $.Struct {
  static _capnp = {
    displayName: "list$Params",
    id: "bed2128dab6b4e7d",
    size: new $.ObjectSize(8, 2)
  };
  get prefix() {
    return $.utils.getText(0, this);
  }
  set prefix(value) {
    $.utils.setText(0, value, this);
  }
  get limit() {
    return $.utils.getUint32(0, this);
  }
  set limit(value) {
    $.utils.setUint32(0, value, this);
  }
  get after() {
    return $.utils.getText(1, this);
  }
  set after(value) {
    $.utils.setText(1, value, this);
  }
  toString() {
    return "Storage_List$Params_" + super.toString();
  }
}
class Storage_List$Results extends $.Struct {
  static _capnp = {
    displayName: "list$Results",
    id: "92a076d13c7863f8",
    size: new $.ObjectSize(0, 1)
  };
  static _Entries;
  _adoptEntries(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownEntries() {
    return $.utils.disown(this.entries);
  }
  get entries() {
    return $.utils.getList(0, Storage_List$Results._Entries, this);
  }
  _hasEntries() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initEntries(length) {
    return $.utils.initList(0, Storage_List$Results._Entries, length, this);
  }
  set entries(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Storage_List$Results_" + super.toString();
  }
}
class Storage_List$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Storage$Client {
  client;
  static interfaceId = 0xe2b34efa9d885fd3n;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: Storage_Get$Params,
      ResultsClass: Storage_Get$Results,
      interfaceId: Storage$Client.interfaceId,
      methodId: 0,
      interfaceName: "gadget.capnp:Storage",
      methodName: "get"
    },
    {
      ParamsClass: Storage_Put$Params,
      ResultsClass: Storage_Put$Results,
      interfaceId: Storage$Client.interfaceId,
      methodId: 1,
      interfaceName: "gadget.capnp:Storage",
      methodName: "put"
    },
    {
      ParamsClass: Storage_Delete$Params,
      ResultsClass: Storage_Delete$Results,
      interfaceId: Storage$Client.interfaceId,
      methodId: 2,
      interfaceName: "gadget.capnp:Storage",
      methodName: "delete"
    },
    {
      ParamsClass: Storage_List$Params,
      ResultsClass: Storage_List$Results,
      interfaceId: Storage$Client.interfaceId,
      methodId: 3,
      interfaceName: "gadget.capnp:Storage",
      methodName: "list"
    }
  ];
  /**
  * Reads one key. `found` is false when the key does not exist.
  *
  */
  get(paramsFunc) {
    const answer = this.client.call({
      method: Storage$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Storage_Get$Results, answer);
    return new Storage_Get$Results$Promise(pipeline);
  }
  /**
  * Writes one key.
  *
  */
  put(paramsFunc) {
    const answer = this.client.call({
      method: Storage$Client.methods[1],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Storage_Put$Results, answer);
    return new Storage_Put$Results$Promise(pipeline);
  }
  /**
  * Removes one key. Removing a missing key is not an error.
  *
  */
  delete(paramsFunc) {
    const answer = this.client.call({
      method: Storage$Client.methods[2],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Storage_Delete$Results, answer);
    return new Storage_Delete$Results$Promise(pipeline);
  }
  /**
  * Lists keys that start with `prefix`, in byte order, starting strictly
  * after `after` (empty: from the beginning). At most `limit` entries
  * (0 means the default of 1000, which is also the maximum).
  *
  */
  list(paramsFunc) {
    const answer = this.client.call({
      method: Storage$Client.methods[3],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Storage_List$Results, answer);
    return new Storage_List$Results$Promise(pipeline);
  }
}
$.Registry.register(Storage$Client.interfaceId, Storage$Client);
class Storage$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...Storage$Client.methods[0],
        impl: target.get
      },
      {
        ...Storage$Client.methods[1],
        impl: target.put
      },
      {
        ...Storage$Client.methods[2],
        impl: target.delete
      },
      {
        ...Storage$Client.methods[3],
        impl: target.list
      }
    ]);
    this.target = target;
  }
  client() {
    return new Storage$Client(this);
  }
}
class Storage extends $.Interface {
  static Entry = Storage_Entry;
  static Client = Storage$Client;
  static Server = Storage$Server;
  static _capnp = {
    displayName: "Storage",
    id: "e2b34efa9d885fd3",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Storage_" + super.toString();
  }
}
SessionContext_Present$Results._Present = $.CompositeList(Caller);
Storage_List$Results._Entries = $.CompositeList(Storage_Entry);
export {
  Caller,
  Guest,
  Guest$Client,
  Guest$Server,
  Guest_Open$Params,
  Guest_Open$Results,
  Guest_Open$Results$Promise,
  Host,
  Host$Client,
  Host$Server,
  Host_Gatekeeper$Params,
  Host_Gatekeeper$Results,
  Host_Gatekeeper$Results$Promise,
  Host_Log$Params,
  Host_Log$Results,
  Host_Log$Results$Promise,
  Host_Storage$Params,
  Host_Storage$Results,
  Host_Storage$Results$Promise,
  LogLevel,
  Role,
  SessionContext,
  SessionContext$Client,
  SessionContext$Server,
  SessionContext_Caller$Params,
  SessionContext_Caller$Results,
  SessionContext_Caller$Results$Promise,
  SessionContext_Present$Params,
  SessionContext_Present$Results,
  SessionContext_Present$Results$Promise,
  Storage,
  Storage$Client,
  Storage$Server,
  Storage_Delete$Params,
  Storage_Delete$Results,
  Storage_Delete$Results$Promise,
  Storage_Entry,
  Storage_Get$Params,
  Storage_Get$Results,
  Storage_Get$Results$Promise,
  Storage_List$Params,
  Storage_List$Results,
  Storage_List$Results$Promise,
  Storage_Put$Params,
  Storage_Put$Results,
  Storage_Put$Results$Promise,
  _capnpFileId
};
