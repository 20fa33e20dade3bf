import * as $ from "capnp-es";
const _capnpFileId = 0xd3b1c9b1418c1831n;
class Gateway_Login$Params extends $.Struct {
  static _capnp = {
    displayName: "login$Params",
    id: "d5bc9f807eec8c21",
    size: new $.ObjectSize(0, 1)
  };
  get token() {
    return $.utils.getText(0, this);
  }
  set token(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Gateway_Login$Params_" + super.toString();
  }
}
class Gateway_Login$Results extends $.Struct {
  static _capnp = {
    displayName: "login$Results",
    id: "fcbc91f13ccf3e17",
    size: new $.ObjectSize(0, 2)
  };
  get workspace() {
    return new Workspace$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set workspace(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  _adoptUser(value) {
    $.utils.adopt(value, $.utils.getPointer(1, this));
  }
  _disownUser() {
    return $.utils.disown(this.user);
  }
  get user() {
    return $.utils.getStruct(1, UserInfo, this);
  }
  _hasUser() {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initUser() {
    return $.utils.initStructAt(1, UserInfo, this);
  }
  set user(value) {
    $.utils.copyFrom(value, $.utils.getPointer(1, this));
  }
  toString() {
    return "Gateway_Login$Results_" + super.toString();
  }
}
class Gateway_Login$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  getWorkspace() {
    return new Workspace$Client(this.pipeline.getPipeline(Workspace, 0).client());
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gateway_Restore$Params extends $.Struct {
  static _capnp = {
    displayName: "restore$Params",
    id: "8de082b3afd042f0",
    size: new $.ObjectSize(0, 1)
  };
  get token() {
    return $.utils.getText(0, this);
  }
  set token(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Gateway_Restore$Params_" + super.toString();
  }
}
class Gateway_Restore$Results extends $.Struct {
  static _capnp = {
    displayName: "restore$Results",
    id: "f8f3ac9ccf9bb9af",
    size: new $.ObjectSize(0, 1)
  };
  _adoptCap(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownCap() {
    return $.utils.disown(this.cap);
  }
  get cap() {
    return $.utils.getPointer(0, this);
  }
  _hasCap() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  set cap(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Gateway_Restore$Results_" + super.toString();
  }
}
class Gateway_Restore$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gateway$Client {
  client;
  static interfaceId = 0xa02c395e0dad31cen;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: Gateway_Login$Params,
      ResultsClass: Gateway_Login$Results,
      interfaceId: Gateway$Client.interfaceId,
      methodId: 0,
      interfaceName: "workspace.capnp:Gateway",
      methodName: "login"
    },
    {
      ParamsClass: Gateway_Restore$Params,
      ResultsClass: Gateway_Restore$Results,
      interfaceId: Gateway$Client.interfaceId,
      methodId: 1,
      interfaceName: "workspace.capnp:Gateway",
      methodName: "restore"
    }
  ];
  /**
  * Exchanges a user token (printed by `gadgetd user add NAME`) for that
  * user's workspace. A wrong token fails with "invalid token" and reveals
  * nothing about which users exist.
  *
  */
  login(paramsFunc) {
    const answer = this.client.call({
      method: Gateway$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gateway_Login$Results, answer);
    return new Gateway_Login$Results$Promise(pipeline);
  }
  /**
  * Turns a token from `save` (Persistent.save on a Gadget, or on a
  * session that `Gadget.open` returned) back into that capability, for
  * whoever saved it, at no more than their role when they saved it and no
  * more than they hold now: a Gadget capability, or a fresh session on
  * the same gadget. No login is needed: the token is the credential, a
  * bearer secret (`gds_...`) the server keeps only as a keyed hash. It
  * dies when its saver loses access to the gadget (the share or link
  * grant their role came through when saving revoked, even if they hold
  * the gadget another way; the gadget removed), or drops it
  * (`Workspace.dropSaved`); revoking the login token it was saved with
  * does not end it. The connection counts as the saver's from then on.
  * A token that is wrong, dropped or dead fails with the same "invalid
  * token", whichever it is.
  *
  */
  restore(paramsFunc) {
    const answer = this.client.call({
      method: Gateway$Client.methods[1],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gateway_Restore$Results, answer);
    return new Gateway_Restore$Results$Promise(pipeline);
  }
}
$.Registry.register(Gateway$Client.interfaceId, Gateway$Client);
class Gateway$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...Gateway$Client.methods[0],
        impl: target.login
      },
      {
        ...Gateway$Client.methods[1],
        impl: target.restore
      }
    ]);
    this.target = target;
  }
  client() {
    return new Gateway$Client(this);
  }
}
class Gateway extends $.Interface {
  static Client = Gateway$Client;
  static Server = Gateway$Server;
  static _capnp = {
    displayName: "Gateway",
    id: "a02c395e0dad31ce",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gateway_" + super.toString();
  }
}
class UserInfo extends $.Struct {
  static _capnp = {
    displayName: "UserInfo",
    id: "a41f1d4cfbc47028",
    size: new $.ObjectSize(0, 2)
  };
  /**
  * Stable, opaque user id.
  *
  */
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  /**
  * Login name.
  *
  */
  get name() {
    return $.utils.getText(1, this);
  }
  set name(value) {
    $.utils.setText(1, value, this);
  }
  toString() {
    return "UserInfo_" + super.toString();
  }
}
class Workspace_Blueprints$Params extends $.Struct {
  static _capnp = {
    displayName: "blueprints$Params",
    id: "d7c18dd2403f0610",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Workspace_Blueprints$Params_" + super.toString();
  }
}
class Workspace_Blueprints$Results extends $.Struct {
  static _capnp = {
    displayName: "blueprints$Results",
    id: "866888d264ac1d63",
    size: new $.ObjectSize(0, 1)
  };
  static _Blueprints;
  _adoptBlueprints(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownBlueprints() {
    return $.utils.disown(this.blueprints);
  }
  get blueprints() {
    return $.utils.getList(0, Workspace_Blueprints$Results._Blueprints, this);
  }
  _hasBlueprints() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initBlueprints(length) {
    return $.utils.initList(0, Workspace_Blueprints$Results._Blueprints, length, this);
  }
  set blueprints(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Blueprints$Results_" + super.toString();
  }
}
class Workspace_Blueprints$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_InstallBlueprint$Params extends $.Struct {
  static _capnp = {
    displayName: "installBlueprint$Params",
    id: "99f40b97a51274f0",
    size: new $.ObjectSize(0, 1)
  };
  _adoptBundle(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownBundle() {
    return $.utils.disown(this.bundle);
  }
  get bundle() {
    return $.utils.getStruct(0, Blueprint, this);
  }
  _hasBundle() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initBundle() {
    return $.utils.initStructAt(0, Blueprint, this);
  }
  set bundle(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_InstallBlueprint$Params_" + super.toString();
  }
}
class Workspace_InstallBlueprint$Results extends $.Struct {
  static _capnp = {
    displayName: "installBlueprint$Results",
    id: "bbf05972f85834c6",
    size: new $.ObjectSize(0, 1)
  };
  _adoptInfo(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownInfo() {
    return $.utils.disown(this.info);
  }
  get info() {
    return $.utils.getStruct(0, BlueprintInfo, this);
  }
  _hasInfo() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initInfo() {
    return $.utils.initStructAt(0, BlueprintInfo, this);
  }
  set info(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_InstallBlueprint$Results_" + super.toString();
  }
}
class Workspace_InstallBlueprint$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Create$Params extends $.Struct {
  static _capnp = {
    displayName: "create$Params",
    id: "83872b2883527daa",
    size: new $.ObjectSize(0, 2)
  };
  get blueprint() {
    return $.utils.getText(0, this);
  }
  set blueprint(value) {
    $.utils.setText(0, value, this);
  }
  get name() {
    return $.utils.getText(1, this);
  }
  set name(value) {
    $.utils.setText(1, value, this);
  }
  toString() {
    return "Workspace_Create$Params_" + super.toString();
  }
}
class Workspace_Create$Results extends $.Struct {
  static _capnp = {
    displayName: "create$Results",
    id: "acc1d3d711d120ea",
    size: new $.ObjectSize(0, 2)
  };
  get gadget() {
    return new Gadget$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set gadget(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  _adoptInfo(value) {
    $.utils.adopt(value, $.utils.getPointer(1, this));
  }
  _disownInfo() {
    return $.utils.disown(this.info);
  }
  get info() {
    return $.utils.getStruct(1, GadgetInfo, this);
  }
  _hasInfo() {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initInfo() {
    return $.utils.initStructAt(1, GadgetInfo, this);
  }
  set info(value) {
    $.utils.copyFrom(value, $.utils.getPointer(1, this));
  }
  toString() {
    return "Workspace_Create$Results_" + super.toString();
  }
}
class Workspace_Create$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  getGadget() {
    return new Gadget$Client(this.pipeline.getPipeline(Gadget, 0).client());
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Gadgets$Params extends $.Struct {
  static _capnp = {
    displayName: "gadgets$Params",
    id: "ee0bb87552e208ee",
    size: new $.ObjectSize(8, 1)
  };
  get after() {
    return $.utils.getText(0, this);
  }
  set after(value) {
    $.utils.setText(0, value, this);
  }
  get limit() {
    return $.utils.getUint32(0, this);
  }
  set limit(value) {
    $.utils.setUint32(0, value, this);
  }
  toString() {
    return "Workspace_Gadgets$Params_" + super.toString();
  }
}
class Workspace_Gadgets$Results extends $.Struct {
  static _capnp = {
    displayName: "gadgets$Results",
    id: "d37782a80dd09584",
    size: new $.ObjectSize(0, 2)
  };
  static _Gadgets;
  _adoptGadgets(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownGadgets() {
    return $.utils.disown(this.gadgets);
  }
  get gadgets() {
    return $.utils.getList(0, Workspace_Gadgets$Results._Gadgets, this);
  }
  _hasGadgets() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initGadgets(length) {
    return $.utils.initList(0, Workspace_Gadgets$Results._Gadgets, length, this);
  }
  set gadgets(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  get next() {
    return $.utils.getText(1, this);
  }
  set next(value) {
    $.utils.setText(1, value, this);
  }
  toString() {
    return "Workspace_Gadgets$Results_" + super.toString();
  }
}
class Workspace_Gadgets$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Open$Params extends $.Struct {
  static _capnp = {
    displayName: "open$Params",
    id: "e607a084ced35e56",
    size: new $.ObjectSize(0, 1)
  };
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Workspace_Open$Params_" + super.toString();
  }
}
class Workspace_Open$Results extends $.Struct {
  static _capnp = {
    displayName: "open$Results",
    id: "8fe4cd9616fd0aa6",
    size: new $.ObjectSize(0, 1)
  };
  get gadget() {
    return new Gadget$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set gadget(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Open$Results_" + super.toString();
  }
}
class Workspace_Open$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  getGadget() {
    return new Gadget$Client(this.pipeline.getPipeline(Gadget, 0).client());
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_ObsoleteRemove$Params extends $.Struct {
  static _capnp = {
    displayName: "obsoleteRemove$Params",
    id: "d36a29631f43ef5a",
    size: new $.ObjectSize(0, 1)
  };
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Workspace_ObsoleteRemove$Params_" + super.toString();
  }
}
class Workspace_ObsoleteRemove$Results extends $.Struct {
  static _capnp = {
    displayName: "obsoleteRemove$Results",
    id: "b78e8cbe29cc503f",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Workspace_ObsoleteRemove$Results_" + super.toString();
  }
}
class Workspace_ObsoleteRemove$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Tokens$Params extends $.Struct {
  static _capnp = {
    displayName: "tokens$Params",
    id: "bf0e253dd1b659f7",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Workspace_Tokens$Params_" + super.toString();
  }
}
class Workspace_Tokens$Results extends $.Struct {
  static _capnp = {
    displayName: "tokens$Results",
    id: "82c16c43f8793e66",
    size: new $.ObjectSize(0, 1)
  };
  static _Tokens;
  _adoptTokens(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownTokens() {
    return $.utils.disown(this.tokens);
  }
  get tokens() {
    return $.utils.getList(0, Workspace_Tokens$Results._Tokens, this);
  }
  _hasTokens() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initTokens(length) {
    return $.utils.initList(0, Workspace_Tokens$Results._Tokens, length, this);
  }
  set tokens(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Tokens$Results_" + super.toString();
  }
}
class Workspace_Tokens$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_NewToken$Params extends $.Struct {
  static _capnp = {
    displayName: "newToken$Params",
    id: "848f26f4a52e155b",
    size: new $.ObjectSize(8, 1)
  };
  get label() {
    return $.utils.getText(0, this);
  }
  set label(value) {
    $.utils.setText(0, value, this);
  }
  get validForSeconds() {
    return $.utils.getUint64(0, this);
  }
  set validForSeconds(value) {
    $.utils.setUint64(0, value, this);
  }
  toString() {
    return "Workspace_NewToken$Params_" + super.toString();
  }
}
class Workspace_NewToken$Results extends $.Struct {
  static _capnp = {
    displayName: "newToken$Results",
    id: "e4664272aa3c57ae",
    size: new $.ObjectSize(0, 2)
  };
  get token() {
    return $.utils.getText(0, this);
  }
  set token(value) {
    $.utils.setText(0, value, this);
  }
  _adoptInfo(value) {
    $.utils.adopt(value, $.utils.getPointer(1, this));
  }
  _disownInfo() {
    return $.utils.disown(this.info);
  }
  get info() {
    return $.utils.getStruct(1, TokenInfo, this);
  }
  _hasInfo() {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initInfo() {
    return $.utils.initStructAt(1, TokenInfo, this);
  }
  set info(value) {
    $.utils.copyFrom(value, $.utils.getPointer(1, this));
  }
  toString() {
    return "Workspace_NewToken$Results_" + super.toString();
  }
}
class Workspace_NewToken$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_RevokeToken$Params extends $.Struct {
  static _capnp = {
    displayName: "revokeToken$Params",
    id: "ebd287194e8d9f47",
    size: new $.ObjectSize(0, 1)
  };
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Workspace_RevokeToken$Params_" + super.toString();
  }
}
class Workspace_RevokeToken$Results extends $.Struct {
  static _capnp = {
    displayName: "revokeToken$Results",
    id: "97db6f9a14f31941",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Workspace_RevokeToken$Results_" + super.toString();
  }
}
class Workspace_RevokeToken$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_UploadBlueprint$Params extends $.Struct {
  static _capnp = {
    displayName: "uploadBlueprint$Params",
    id: "cea8ffe10f15208e",
    size: new $.ObjectSize(8, 0)
  };
  get size() {
    return $.utils.getUint64(0, this);
  }
  set size(value) {
    $.utils.setUint64(0, value, this);
  }
  toString() {
    return "Workspace_UploadBlueprint$Params_" + super.toString();
  }
}
class Workspace_UploadBlueprint$Results extends $.Struct {
  static _capnp = {
    displayName: "uploadBlueprint$Results",
    id: "8ffeef709eac22bd",
    size: new $.ObjectSize(0, 1)
  };
  get upload() {
    return new BlueprintUpload$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set upload(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_UploadBlueprint$Results_" + super.toString();
  }
}
class Workspace_UploadBlueprint$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  getUpload() {
    return new BlueprintUpload$Client(this.pipeline.getPipeline(BlueprintUpload, 0).client());
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Services$Params extends $.Struct {
  static _capnp = {
    displayName: "services$Params",
    id: "f19a565bea953533",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Workspace_Services$Params_" + super.toString();
  }
}
class Workspace_Services$Results extends $.Struct {
  static _capnp = {
    displayName: "services$Results",
    id: "8fa8646a880527e7",
    size: new $.ObjectSize(0, 1)
  };
  static _Services;
  _adoptServices(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownServices() {
    return $.utils.disown(this.services);
  }
  get services() {
    return $.utils.getList(0, Workspace_Services$Results._Services, this);
  }
  _hasServices() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initServices(length) {
    return $.utils.initList(0, Workspace_Services$Results._Services, length, this);
  }
  set services(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Services$Results_" + super.toString();
  }
}
class Workspace_Services$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_GatekeeperSchema$Params extends $.Struct {
  static _capnp = {
    displayName: "gatekeeperSchema$Params",
    id: "c4ad7084757c4b25",
    size: new $.ObjectSize(0, 1)
  };
  get kind() {
    return $.utils.getText(0, this);
  }
  set kind(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Workspace_GatekeeperSchema$Params_" + super.toString();
  }
}
class Workspace_GatekeeperSchema$Results extends $.Struct {
  static _capnp = {
    displayName: "gatekeeperSchema$Results",
    id: "82a0932dc7684e89",
    size: new $.ObjectSize(8, 2)
  };
  _adoptNodes(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownNodes() {
    return $.utils.disown(this.nodes);
  }
  get nodes() {
    return $.utils.getData(0, this);
  }
  _hasNodes() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initNodes(length) {
    return $.utils.initData(0, length, this);
  }
  set nodes(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  get interfaceId() {
    return $.utils.getUint64(0, this);
  }
  set interfaceId(value) {
    $.utils.setUint64(0, value, this);
  }
  get source() {
    return $.utils.getText(1, this);
  }
  set source(value) {
    $.utils.setText(1, value, this);
  }
  toString() {
    return "Workspace_GatekeeperSchema$Results_" + super.toString();
  }
}
class Workspace_GatekeeperSchema$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Actions$Params extends $.Struct {
  static _capnp = {
    displayName: "actions$Params",
    id: "dfa4ca263bfff8bd",
    size: new $.ObjectSize(0, 1)
  };
  _adoptFilter(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownFilter() {
    return $.utils.disown(this.filter);
  }
  get filter() {
    return $.utils.getStruct(0, ActionFilter, this);
  }
  _hasFilter() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initFilter() {
    return $.utils.initStructAt(0, ActionFilter, this);
  }
  set filter(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Actions$Params_" + super.toString();
  }
}
class Workspace_Actions$Results extends $.Struct {
  static _capnp = {
    displayName: "actions$Results",
    id: "de2643dc8496ccc0",
    size: new $.ObjectSize(0, 1)
  };
  static _Actions;
  _adoptActions(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownActions() {
    return $.utils.disown(this.actions);
  }
  get actions() {
    return $.utils.getList(0, Workspace_Actions$Results._Actions, this);
  }
  _hasActions() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initActions(length) {
    return $.utils.initList(0, Workspace_Actions$Results._Actions, length, this);
  }
  set actions(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Actions$Results_" + super.toString();
  }
}
class Workspace_Actions$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Decide$Params extends $.Struct {
  static _capnp = {
    displayName: "decide$Params",
    id: "92178ffd7a140d81",
    size: new $.ObjectSize(8, 1)
  };
  _adoptIds(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownIds() {
    return $.utils.disown(this.ids);
  }
  get ids() {
    return $.utils.getList(0, $.TextList, this);
  }
  _hasIds() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initIds(length) {
    return $.utils.initList(0, $.TextList, length, this);
  }
  set ids(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  get approve() {
    return $.utils.getBit(0, this);
  }
  set approve(value) {
    $.utils.setBit(0, value, this);
  }
  toString() {
    return "Workspace_Decide$Params_" + super.toString();
  }
}
class Workspace_Decide$Results extends $.Struct {
  static _capnp = {
    displayName: "decide$Results",
    id: "de41ae6884731230",
    size: new $.ObjectSize(0, 1)
  };
  static _Decisions;
  _adoptDecisions(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownDecisions() {
    return $.utils.disown(this.decisions);
  }
  get decisions() {
    return $.utils.getList(0, Workspace_Decide$Results._Decisions, this);
  }
  _hasDecisions() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initDecisions(length) {
    return $.utils.initList(0, Workspace_Decide$Results._Decisions, length, this);
  }
  set decisions(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Decide$Results_" + super.toString();
  }
}
class Workspace_Decide$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Audit$Params extends $.Struct {
  static _capnp = {
    displayName: "audit$Params",
    id: "daa4b964784b2c19",
    size: new $.ObjectSize(0, 1)
  };
  _adoptFilter(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownFilter() {
    return $.utils.disown(this.filter);
  }
  get filter() {
    return $.utils.getStruct(0, AuditFilter, this);
  }
  _hasFilter() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initFilter() {
    return $.utils.initStructAt(0, AuditFilter, this);
  }
  set filter(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Audit$Params_" + super.toString();
  }
}
class Workspace_Audit$Results extends $.Struct {
  static _capnp = {
    displayName: "audit$Results",
    id: "ac31f73382fcd53e",
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
    return $.utils.getList(0, Workspace_Audit$Results._Entries, this);
  }
  _hasEntries() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initEntries(length) {
    return $.utils.initList(0, Workspace_Audit$Results._Entries, length, this);
  }
  set entries(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Audit$Results_" + super.toString();
  }
}
class Workspace_Audit$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_WatchActions$Params extends $.Struct {
  static _capnp = {
    displayName: "watchActions$Params",
    id: "fee970fafe585f5a",
    size: new $.ObjectSize(0, 1)
  };
  get listener() {
    return new ActionListener$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set listener(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_WatchActions$Params_" + super.toString();
  }
}
class Workspace_WatchActions$Results extends $.Struct {
  static _capnp = {
    displayName: "watchActions$Results",
    id: "82fc957c889bfe28",
    size: new $.ObjectSize(0, 1)
  };
  get subscription() {
    return new Subscription$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set subscription(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_WatchActions$Results_" + super.toString();
  }
}
class Workspace_WatchActions$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  getSubscription() {
    return new Subscription$Client(this.pipeline.getPipeline(Subscription, 0).client());
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Redeem$Params extends $.Struct {
  static _capnp = {
    displayName: "redeem$Params",
    id: "b3da1d765266f769",
    size: new $.ObjectSize(0, 1)
  };
  get secret() {
    return $.utils.getText(0, this);
  }
  set secret(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Workspace_Redeem$Params_" + super.toString();
  }
}
class Workspace_Redeem$Results extends $.Struct {
  static _capnp = {
    displayName: "redeem$Results",
    id: "9a6a4b85ed1d65e5",
    size: new $.ObjectSize(8, 2)
  };
  get gadget() {
    return new Gadget$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set gadget(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  _adoptInfo(value) {
    $.utils.adopt(value, $.utils.getPointer(1, this));
  }
  _disownInfo() {
    return $.utils.disown(this.info);
  }
  get info() {
    return $.utils.getStruct(1, GadgetInfo, this);
  }
  _hasInfo() {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initInfo() {
    return $.utils.initStructAt(1, GadgetInfo, this);
  }
  set info(value) {
    $.utils.copyFrom(value, $.utils.getPointer(1, this));
  }
  get redeemed() {
    return $.utils.getBit(0, this);
  }
  set redeemed(value) {
    $.utils.setBit(0, value, this);
  }
  toString() {
    return "Workspace_Redeem$Results_" + super.toString();
  }
}
class Workspace_Redeem$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  getGadget() {
    return new Gadget$Client(this.pipeline.getPipeline(Gadget, 0).client());
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_Saved$Params extends $.Struct {
  static _capnp = {
    displayName: "saved$Params",
    id: "9b6d1c4c3ea62cd0",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Workspace_Saved$Params_" + super.toString();
  }
}
class Workspace_Saved$Results extends $.Struct {
  static _capnp = {
    displayName: "saved$Results",
    id: "8289e98683869e32",
    size: new $.ObjectSize(0, 1)
  };
  static _Saved;
  _adoptSaved(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownSaved() {
    return $.utils.disown(this.saved);
  }
  get saved() {
    return $.utils.getList(0, Workspace_Saved$Results._Saved, this);
  }
  _hasSaved() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initSaved(length) {
    return $.utils.initList(0, Workspace_Saved$Results._Saved, length, this);
  }
  set saved(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Workspace_Saved$Results_" + super.toString();
  }
}
class Workspace_Saved$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace_DropSaved$Params extends $.Struct {
  static _capnp = {
    displayName: "dropSaved$Params",
    id: "ade59244720da952",
    size: new $.ObjectSize(0, 1)
  };
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Workspace_DropSaved$Params_" + super.toString();
  }
}
class Workspace_DropSaved$Results extends $.Struct {
  static _capnp = {
    displayName: "dropSaved$Results",
    id: "e6a2bf4cf3a8e4c8",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Workspace_DropSaved$Results_" + super.toString();
  }
}
class Workspace_DropSaved$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Workspace$Client {
  client;
  static interfaceId = 0xc3d2836d4f4597aen;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: Workspace_Blueprints$Params,
      ResultsClass: Workspace_Blueprints$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 0,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "blueprints"
    },
    {
      ParamsClass: Workspace_InstallBlueprint$Params,
      ResultsClass: Workspace_InstallBlueprint$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 1,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "installBlueprint"
    },
    {
      ParamsClass: Workspace_Create$Params,
      ResultsClass: Workspace_Create$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 2,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "create"
    },
    {
      ParamsClass: Workspace_Gadgets$Params,
      ResultsClass: Workspace_Gadgets$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 3,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "gadgets"
    },
    {
      ParamsClass: Workspace_Open$Params,
      ResultsClass: Workspace_Open$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 4,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "open"
    },
    {
      ParamsClass: Workspace_ObsoleteRemove$Params,
      ResultsClass: Workspace_ObsoleteRemove$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 5,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "obsoleteRemove"
    },
    {
      ParamsClass: Workspace_Tokens$Params,
      ResultsClass: Workspace_Tokens$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 6,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "tokens"
    },
    {
      ParamsClass: Workspace_NewToken$Params,
      ResultsClass: Workspace_NewToken$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 7,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "newToken"
    },
    {
      ParamsClass: Workspace_RevokeToken$Params,
      ResultsClass: Workspace_RevokeToken$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 8,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "revokeToken"
    },
    {
      ParamsClass: Workspace_UploadBlueprint$Params,
      ResultsClass: Workspace_UploadBlueprint$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 9,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "uploadBlueprint"
    },
    {
      ParamsClass: Workspace_Services$Params,
      ResultsClass: Workspace_Services$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 10,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "services"
    },
    {
      ParamsClass: Workspace_GatekeeperSchema$Params,
      ResultsClass: Workspace_GatekeeperSchema$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 11,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "gatekeeperSchema"
    },
    {
      ParamsClass: Workspace_Actions$Params,
      ResultsClass: Workspace_Actions$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 12,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "actions"
    },
    {
      ParamsClass: Workspace_Decide$Params,
      ResultsClass: Workspace_Decide$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 13,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "decide"
    },
    {
      ParamsClass: Workspace_Audit$Params,
      ResultsClass: Workspace_Audit$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 14,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "audit"
    },
    {
      ParamsClass: Workspace_WatchActions$Params,
      ResultsClass: Workspace_WatchActions$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 15,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "watchActions"
    },
    {
      ParamsClass: Workspace_Redeem$Params,
      ResultsClass: Workspace_Redeem$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 16,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "redeem"
    },
    {
      ParamsClass: Workspace_Saved$Params,
      ResultsClass: Workspace_Saved$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 17,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "saved"
    },
    {
      ParamsClass: Workspace_DropSaved$Params,
      ResultsClass: Workspace_DropSaved$Results,
      interfaceId: Workspace$Client.interfaceId,
      methodId: 18,
      interfaceName: "workspace.capnp:Workspace",
      methodName: "dropSaved"
    }
  ];
  /**
  * The blueprints that can be instantiated: those shipped with the server
  * and those this user installed, newest version of each name.
  *
  */
  blueprints(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Blueprints$Results, answer);
    return new Workspace_Blueprints$Results$Promise(pipeline);
  }
  /**
  * Validates and installs a blueprint for this user. The wasm must compile
  * and export the guest ABI (docs/ABI.md), the manifest's session interface
  * must exist in the bundled schema, and the version must be new for this
  * name. Otherwise it fails with an error that names the problem. The bundle
  * must fit in one message (the connection's message limit, 9 MiB by
  * default); `uploadBlueprint` takes a bundle of any allowed size.
  *
  */
  installBlueprint(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[1],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_InstallBlueprint$Results, answer);
    return new Workspace_InstallBlueprint$Results$Promise(pipeline);
  }
  /**
  * Creates a new gadget from the newest version of the named blueprint. The
  * caller becomes its owner. `name` is a label for humans; empty means the
  * blueprint's name.
  *
  */
  create(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[2],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Create$Results, answer);
    return new Workspace_Create$Results$Promise(pipeline);
  }
  /**
  * The gadgets this user can reach (their own and those shared with them,
  * `GadgetInfo.sharedBy` tells which), oldest first, a page at a time, each
  * with its Gadget capability: the listing is the authority, no id needs
  * looking up again. Release what you do not keep: each counts against your
  * connection's bound on capabilities held.
  *
  * A page holds at most `limit` gadgets (0 means 100; more than 1000 is
  * refused). `after` is empty for the first page and the previous page's
  * `next` for each later one; `next` is empty on the last page. A cursor is
  * an opaque position in the order (creation time, then id) and stays valid
  * when gadgets come and go between pages: those removed are skipped, and
  * those that became reachable since appear if they sort after it. A gadget
  * created since does, unless created in the very millisecond of the
  * cursor's own; one shared with you since sorts by when it was created,
  * and may not. List from the start again to be sure of everything.
  *
  */
  gadgets(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[3],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Gadgets$Results, answer);
    return new Workspace_Gadgets$Results$Promise(pipeline);
  }
  /**
  * The gadget with this id, attenuated to the caller's role.
  *
  */
  open(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[4],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Open$Results, answer);
    return new Workspace_Open$Results$Promise(pipeline);
  }
  /**
  * Reserved: was `remove(id)`, now `Gadget.remove()` (the authority to
  * delete a gadget lives on the owner's capability to it, not on the
  * workspace). Fails with "unimplemented". Cap'n Proto ordinals cannot have
  * holes and must not be reused, so this ordinal stays, unused.
  *
  */
  obsoleteRemove(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[5],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_ObsoleteRemove$Results, answer);
    return new Workspace_ObsoleteRemove$Results$Promise(pipeline);
  }
  /**
  * This user's login tokens, oldest first: their public ids and labels,
  * never the secrets (the server keeps only hashes).
  *
  */
  tokens(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[6],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Tokens$Results, answer);
    return new Workspace_Tokens$Results$Promise(pipeline);
  }
  /**
  * Issues another login token for this user. `label` (at most 200 bytes)
  * says where it will be used; `validForSeconds` 0 means it never expires.
  * The secret is in `token` and nowhere else: it cannot be shown again.
  * A user may hold a bounded number of tokens; past it this fails until one
  * is revoked.
  *
  */
  newToken(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[7],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_NewToken$Results, answer);
    return new Workspace_NewToken$Results$Promise(pipeline);
  }
  /**
  * Revokes one of this user's tokens by its id. It no longer logs in, and
  * every Workspace and Gadget capability obtained with it, and every session
  * opened through them, fails from its next call with "the token this
  * capability was obtained with was revoked" (a disconnected exception).
  * Revoking the token this workspace came from is allowed and ends it. An id
  * that is not one of this user's tokens fails with "unknown token id",
  * whoever else's it may be.
  *
  */
  revokeToken(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[8],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_RevokeToken$Results, answer);
    return new Workspace_RevokeToken$Results$Promise(pipeline);
  }
  /**
  * Starts installing a blueprint bundle of exactly `size` bytes, streamed
  * in chunks rather than sent in one message: write a `Blueprint` struct,
  * serialized as a Cap'n Proto message in the standard (unpacked) stream
  * framing, to `upload`, then call `finish`, which installs it exactly as
  * `installBlueprint` would. `size` is bounded by the server's blueprint
  * limits; a user may have only a few uploads open at once.
  *
  */
  uploadBlueprint(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[9],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_UploadBlueprint$Results, answer);
    return new Workspace_UploadBlueprint$Results$Promise(pipeline);
  }
  /**
  * The services the operator configured, which a gadget of this user can
  * be bound to (`Gadget.bind`). Their secrets stay in the server.
  *
  */
  services(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[10],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Services$Results, answer);
    return new Workspace_Services$Results$Promise(pipeline);
  }
  /**
  * The schema of one kind of gatekeeper ("http", "github"), as
  * `Gadget.schema()` gives a blueprint's: its compiled nodes, its
  * interface (which extends `Gatekeeper`), and its `.capnp` source, for
  * blueprint authors.
  *
  */
  gatekeeperSchema(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[11],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_GatekeeperSchema$Results, answer);
    return new Workspace_GatekeeperSchema$Results$Promise(pipeline);
  }
  /**
  * The actions the gadgets of this workspace queued, oldest first: side
  * effects a gatekeeper holds until this user approves them.
  *
  */
  actions(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[12],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Actions$Results, answer);
    return new Workspace_Actions$Results$Promise(pipeline);
  }
  /**
  * Approves or rejects the actions with these ids, each on its own: one
  * that cannot be decided (unknown, already decided) says why in its
  * Decision and does not stop the others. An approved action is applied
  * in its binding's queue order, exactly once; a rejected one is dropped,
  * and the simulated change it made disappears from the gadget's reads.
  * Retrying (approve) or dropping (reject) an action left in doubt by a
  * crash is a decision too.
  *
  */
  decide(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[13],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Decide$Results, answer);
    return new Workspace_Decide$Results$Promise(pipeline);
  }
  /**
  * The audit log: every call the gadgets of this workspace made on a
  * gatekeeper, and every decision and outcome of an action, newest first.
  * It keeps a bounded number of entries; the oldest go first.
  *
  */
  audit(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[14],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Audit$Results, answer);
    return new Workspace_Audit$Results$Promise(pipeline);
  }
  /**
  * Calls listener with every action of this workspace that is queued or
  * changes state, from now on, until the subscription is released.
  *
  */
  watchActions(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[15],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_WatchActions$Results, answer);
    return new Workspace_WatchActions$Results$Promise(pipeline);
  }
  /**
  * Redeems a share link's secret (`Gadget.createLink`): the gadget joins
  * this workspace at the link's role (less if its creator now holds less),
  * and stays until the link, or a share above it, is revoked. If you
  * already hold the gadget at that role or better (your own link, say),
  * nothing changes, a single-use link is not consumed, and `redeemed` is
  * false. A secret that is wrong, expired, revoked or already used fails
  * with the same "invalid or expired link", whichever it is.
  *
  */
  redeem(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[16],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Redeem$Results, answer);
    return new Workspace_Redeem$Results$Promise(pipeline);
  }
  /**
  * The tokens this user saved (Persistent.save), oldest first, never the
  * secrets.
  *
  */
  saved(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[17],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_Saved$Results, answer);
    return new Workspace_Saved$Results$Promise(pipeline);
  }
  /**
  * Drops one of this user's saved tokens by its id: it restores nothing
  * from then on, and capabilities restored from it fail from their next
  * call. An id that is not one of this user's saved tokens fails with
  * "unknown saved token id".
  *
  */
  dropSaved(paramsFunc) {
    const answer = this.client.call({
      method: Workspace$Client.methods[18],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Workspace_DropSaved$Results, answer);
    return new Workspace_DropSaved$Results$Promise(pipeline);
  }
}
$.Registry.register(Workspace$Client.interfaceId, Workspace$Client);
class Workspace$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...Workspace$Client.methods[0],
        impl: target.blueprints
      },
      {
        ...Workspace$Client.methods[1],
        impl: target.installBlueprint
      },
      {
        ...Workspace$Client.methods[2],
        impl: target.create
      },
      {
        ...Workspace$Client.methods[3],
        impl: target.gadgets
      },
      {
        ...Workspace$Client.methods[4],
        impl: target.open
      },
      {
        ...Workspace$Client.methods[5],
        impl: target.obsoleteRemove
      },
      {
        ...Workspace$Client.methods[6],
        impl: target.tokens
      },
      {
        ...Workspace$Client.methods[7],
        impl: target.newToken
      },
      {
        ...Workspace$Client.methods[8],
        impl: target.revokeToken
      },
      {
        ...Workspace$Client.methods[9],
        impl: target.uploadBlueprint
      },
      {
        ...Workspace$Client.methods[10],
        impl: target.services
      },
      {
        ...Workspace$Client.methods[11],
        impl: target.gatekeeperSchema
      },
      {
        ...Workspace$Client.methods[12],
        impl: target.actions
      },
      {
        ...Workspace$Client.methods[13],
        impl: target.decide
      },
      {
        ...Workspace$Client.methods[14],
        impl: target.audit
      },
      {
        ...Workspace$Client.methods[15],
        impl: target.watchActions
      },
      {
        ...Workspace$Client.methods[16],
        impl: target.redeem
      },
      {
        ...Workspace$Client.methods[17],
        impl: target.saved
      },
      {
        ...Workspace$Client.methods[18],
        impl: target.dropSaved
      }
    ]);
    this.target = target;
  }
  client() {
    return new Workspace$Client(this);
  }
}
class Workspace extends $.Interface {
  static Client = Workspace$Client;
  static Server = Workspace$Server;
  static _capnp = {
    displayName: "Workspace",
    id: "c3d2836d4f4597ae",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Workspace_" + super.toString();
  }
}
class SavedInfo extends $.Struct {
  static _capnp = {
    displayName: "SavedInfo",
    id: "bfc13901e08edf8a",
    size: new $.ObjectSize(16, 2)
  };
  /**
  * Public handle, for dropSaved.
  *
  */
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  /**
  * The gadget's id.
  *
  */
  get gadget() {
    return $.utils.getText(1, this);
  }
  set gadget(value) {
    $.utils.setText(1, value, this);
  }
  get kind() {
    return $.utils.getUint16(0, this);
  }
  set kind(value) {
    $.utils.setUint16(0, value, this);
  }
  /**
  * The saver's role when it was saved: the most it restores.
  *
  */
  get role() {
    return $.utils.getUint16(2, this);
  }
  set role(value) {
    $.utils.setUint16(2, value, this);
  }
  /**
  * Unix time in milliseconds.
  *
  */
  get createdAt() {
    return $.utils.getInt64(8, this);
  }
  set createdAt(value) {
    $.utils.setInt64(8, value, this);
  }
  toString() {
    return "SavedInfo_" + super.toString();
  }
}
const SavedKind = {
  /**
  * Restores a Gadget capability.
  *
  */
  GADGET: 0,
  /**
  * Restores a fresh session, as Gadget.open opens one.
  *
  */
  SESSION: 1
};
class ServiceInfo extends $.Struct {
  static _capnp = {
    displayName: "ServiceInfo",
    id: "9c3322385067fd81",
    size: new $.ObjectSize(0, 4)
  };
  get name() {
    return $.utils.getText(0, this);
  }
  set name(value) {
    $.utils.setText(0, value, this);
  }
  get kind() {
    return $.utils.getText(1, this);
  }
  set kind(value) {
    $.utils.setText(1, value, this);
  }
  get description() {
    return $.utils.getText(2, this);
  }
  set description(value) {
    $.utils.setText(2, value, this);
  }
  _adoptActions(value) {
    $.utils.adopt(value, $.utils.getPointer(3, this));
  }
  _disownActions() {
    return $.utils.disown(this.actions);
  }
  /**
  * The methods of its kind that are actions, for `Gadget.setAutoApprove`.
  *
  */
  get actions() {
    return $.utils.getList(3, $.TextList, this);
  }
  _hasActions() {
    return !$.utils.isNull($.utils.getPointer(3, this));
  }
  _initActions(length) {
    return $.utils.initList(3, $.TextList, length, this);
  }
  set actions(value) {
    $.utils.copyFrom(value, $.utils.getPointer(3, this));
  }
  toString() {
    return "ServiceInfo_" + super.toString();
  }
}
class BindingInfo extends $.Struct {
  static _capnp = {
    displayName: "BindingInfo",
    id: "de95600576f2d870",
    size: new $.ObjectSize(8, 6)
  };
  /**
  * What the gadget asks `Host.gatekeeper` for.
  *
  */
  get name() {
    return $.utils.getText(0, this);
  }
  set name(value) {
    $.utils.setText(0, value, this);
  }
  get service() {
    return $.utils.getText(1, this);
  }
  set service(value) {
    $.utils.setText(1, value, this);
  }
  get kind() {
    return $.utils.getText(2, this);
  }
  set kind(value) {
    $.utils.setText(2, value, this);
  }
  /**
  * The one resource it grants: "owner/repo", a URL prefix.
  *
  */
  get resource() {
    return $.utils.getText(3, this);
  }
  set resource(value) {
    $.utils.setText(3, value, this);
  }
  get createdBy() {
    return $.utils.getText(4, this);
  }
  set createdBy(value) {
    $.utils.setText(4, value, this);
  }
  /**
  * Unix milliseconds.
  *
  */
  get createdAt() {
    return $.utils.getInt64(0, this);
  }
  set createdAt(value) {
    $.utils.setInt64(0, value, this);
  }
  _adoptAutoApprove(value) {
    $.utils.adopt(value, $.utils.getPointer(5, this));
  }
  _disownAutoApprove() {
    return $.utils.disown(this.autoApprove);
  }
  /**
  * Its action methods that are approved as they are queued.
  *
  */
  get autoApprove() {
    return $.utils.getList(5, $.TextList, this);
  }
  _hasAutoApprove() {
    return !$.utils.isNull($.utils.getPointer(5, this));
  }
  _initAutoApprove(length) {
    return $.utils.initList(5, $.TextList, length, this);
  }
  set autoApprove(value) {
    $.utils.copyFrom(value, $.utils.getPointer(5, this));
  }
  toString() {
    return "BindingInfo_" + super.toString();
  }
}
const ActionState = {
  /**
  * Waits for a decision.
  *
  */
  PENDING: 0,
  /**
  * Waits for its turn to apply.
  *
  */
  APPROVED: 1,
  APPLYING: 2,
  APPLIED: 3,
  /**
  * Its real call failed: see outcome.
  *
  */
  FAILED: 4,
  REJECTED: 5,
  /**
  * Its real call had begun when the server stopped, and nothing can tell
  * whether it took effect: approve retries it, reject drops it.
  *
  */
  IN_DOUBT: 6
};
class ActionInfo extends $.Struct {
  static _capnp = {
    displayName: "ActionInfo",
    id: "9a9fb9763b7edd56",
    size: new $.ObjectSize(40, 11)
  };
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  get seq() {
    return $.utils.getUint64(0, this);
  }
  set seq(value) {
    $.utils.setUint64(0, value, this);
  }
  get gadget() {
    return $.utils.getText(1, this);
  }
  set gadget(value) {
    $.utils.setText(1, value, this);
  }
  get binding() {
    return $.utils.getText(2, this);
  }
  set binding(value) {
    $.utils.setText(2, value, this);
  }
  get kind() {
    return $.utils.getText(3, this);
  }
  set kind(value) {
    $.utils.setText(3, value, this);
  }
  get method() {
    return $.utils.getText(4, this);
  }
  set method(value) {
    $.utils.setText(4, value, this);
  }
  get user() {
    return $.utils.getText(5, this);
  }
  set user(value) {
    $.utils.setText(5, value, this);
  }
  get state() {
    return $.utils.getUint16(8, this);
  }
  set state(value) {
    $.utils.setUint16(8, value, this);
  }
  get description() {
    return $.utils.getText(6, this);
  }
  set description(value) {
    $.utils.setText(6, value, this);
  }
  get createdAt() {
    return $.utils.getInt64(16, this);
  }
  set createdAt(value) {
    $.utils.setInt64(16, value, this);
  }
  get decidedBy() {
    return $.utils.getText(7, this);
  }
  set decidedBy(value) {
    $.utils.setText(7, value, this);
  }
  get decidedAt() {
    return $.utils.getInt64(24, this);
  }
  set decidedAt(value) {
    $.utils.setInt64(24, value, this);
  }
  get doneAt() {
    return $.utils.getInt64(32, this);
  }
  set doneAt(value) {
    $.utils.setInt64(32, value, this);
  }
  /**
  * What applying it did, or why it failed.
  *
  */
  get outcome() {
    return $.utils.getText(8, this);
  }
  set outcome(value) {
    $.utils.setText(8, value, this);
  }
  /**
  * Everything it will do, as its kind renders it for the human deciding:
  * the whole text of an issue or a comment, the request a POST will send.
  * Read it before approving: the description is one line.
  *
  */
  get details() {
    return $.utils.getText(9, this);
  }
  set details(value) {
    $.utils.setText(9, value, this);
  }
  /**
  * The login name of `user`, whose session queued it.
  *
  */
  get userName() {
    return $.utils.getText(10, this);
  }
  set userName(value) {
    $.utils.setText(10, value, this);
  }
  toString() {
    return "ActionInfo_" + super.toString();
  }
}
class ActionFilter extends $.Struct {
  static _capnp = {
    displayName: "ActionFilter",
    id: "dd5be115a087d66c",
    size: new $.ObjectSize(16, 2)
  };
  _adoptStates(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownStates() {
    return $.utils.disown(this.states);
  }
  /**
  * Empty: every state.
  *
  */
  get states() {
    return $.utils.getList(0, $.Uint16List, this);
  }
  _hasStates() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initStates(length) {
    return $.utils.initList(0, $.Uint16List, length, this);
  }
  set states(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  get gadget() {
    return $.utils.getText(1, this);
  }
  set gadget(value) {
    $.utils.setText(1, value, this);
  }
  get afterSeq() {
    return $.utils.getUint64(0, this);
  }
  set afterSeq(value) {
    $.utils.setUint64(0, value, this);
  }
  /**
  * 0: the server's default.
  *
  */
  get limit() {
    return $.utils.getUint32(8, this);
  }
  set limit(value) {
    $.utils.setUint32(8, value, this);
  }
  toString() {
    return "ActionFilter_" + super.toString();
  }
}
class Decision extends $.Struct {
  static _capnp = {
    displayName: "Decision",
    id: "a83e2cdf16844c50",
    size: new $.ObjectSize(8, 3)
  };
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  get ok() {
    return $.utils.getBit(0, this);
  }
  set ok(value) {
    $.utils.setBit(0, value, this);
  }
  /**
  * Why not, when not ok.
  *
  */
  get reason() {
    return $.utils.getText(1, this);
  }
  set reason(value) {
    $.utils.setText(1, value, this);
  }
  _adoptAction(value) {
    $.utils.adopt(value, $.utils.getPointer(2, this));
  }
  _disownAction() {
    return $.utils.disown(this.action);
  }
  get action() {
    return $.utils.getStruct(2, ActionInfo, this);
  }
  _hasAction() {
    return !$.utils.isNull($.utils.getPointer(2, this));
  }
  _initAction() {
    return $.utils.initStructAt(2, ActionInfo, this);
  }
  set action(value) {
    $.utils.copyFrom(value, $.utils.getPointer(2, this));
  }
  toString() {
    return "Decision_" + super.toString();
  }
}
class AuditFilter extends $.Struct {
  static _capnp = {
    displayName: "AuditFilter",
    id: "efba1a4f8b9168ee",
    size: new $.ObjectSize(16, 1)
  };
  get gadget() {
    return $.utils.getText(0, this);
  }
  set gadget(value) {
    $.utils.setText(0, value, this);
  }
  /**
  * 0: from the newest.
  *
  */
  get beforeSeq() {
    return $.utils.getUint64(0, this);
  }
  set beforeSeq(value) {
    $.utils.setUint64(0, value, this);
  }
  get limit() {
    return $.utils.getUint32(8, this);
  }
  set limit(value) {
    $.utils.setUint32(8, value, this);
  }
  toString() {
    return "AuditFilter_" + super.toString();
  }
}
class AuditEntry extends $.Struct {
  static _capnp = {
    displayName: "AuditEntry",
    id: "da91f3293135c315",
    size: new $.ObjectSize(24, 9)
  };
  get seq() {
    return $.utils.getUint64(0, this);
  }
  set seq(value) {
    $.utils.setUint64(0, value, this);
  }
  get time() {
    return $.utils.getInt64(8, this);
  }
  set time(value) {
    $.utils.setInt64(8, value, this);
  }
  get gadget() {
    return $.utils.getText(0, this);
  }
  set gadget(value) {
    $.utils.setText(0, value, this);
  }
  get user() {
    return $.utils.getText(1, this);
  }
  set user(value) {
    $.utils.setText(1, value, this);
  }
  get binding() {
    return $.utils.getText(2, this);
  }
  set binding(value) {
    $.utils.setText(2, value, this);
  }
  get kind() {
    return $.utils.getText(3, this);
  }
  set kind(value) {
    $.utils.setText(3, value, this);
  }
  get method() {
    return $.utils.getText(4, this);
  }
  set method(value) {
    $.utils.setText(4, value, this);
  }
  /**
  * An action (a side effect) rather than an observation (a read).
  *
  */
  get action() {
    return $.utils.getBit(128, this);
  }
  set action(value) {
    $.utils.setBit(128, value, this);
  }
  get description() {
    return $.utils.getText(5, this);
  }
  set description(value) {
    $.utils.setText(5, value, this);
  }
  get outcome() {
    return $.utils.getText(6, this);
  }
  set outcome(value) {
    $.utils.setText(6, value, this);
  }
  get failed() {
    return $.utils.getBit(129, this);
  }
  set failed(value) {
    $.utils.setBit(129, value, this);
  }
  get actionId() {
    return $.utils.getText(7, this);
  }
  set actionId(value) {
    $.utils.setText(7, value, this);
  }
  /**
  * The login name of `user`, whose session made the call (a user the
  * gadget was shared with, or its owner).
  *
  */
  get userName() {
    return $.utils.getText(8, this);
  }
  set userName(value) {
    $.utils.setText(8, value, this);
  }
  toString() {
    return "AuditEntry_" + super.toString();
  }
}
class ActionListener_Changed$Params extends $.Struct {
  static _capnp = {
    displayName: "changed$Params",
    id: "dc41118c9124cc54",
    size: new $.ObjectSize(0, 1)
  };
  _adoptAction(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownAction() {
    return $.utils.disown(this.action);
  }
  get action() {
    return $.utils.getStruct(0, ActionInfo, this);
  }
  _hasAction() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initAction() {
    return $.utils.initStructAt(0, ActionInfo, this);
  }
  set action(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "ActionListener_Changed$Params_" + super.toString();
  }
}
class ActionListener_Changed$Results extends $.Struct {
  static _capnp = {
    displayName: "changed$Results",
    id: "ad5553d3727b21b2",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "ActionListener_Changed$Results_" + super.toString();
  }
}
class ActionListener_Changed$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class ActionListener_Missed$Params extends $.Struct {
  static _capnp = {
    displayName: "missed$Params",
    id: "b3342aa6d6a61eb5",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "ActionListener_Missed$Params_" + super.toString();
  }
}
class ActionListener_Missed$Results extends $.Struct {
  static _capnp = {
    displayName: "missed$Results",
    id: "c62999555eeba0df",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "ActionListener_Missed$Results_" + super.toString();
  }
}
class ActionListener_Missed$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class ActionListener$Client {
  client;
  static interfaceId = 0xdc1475800b957866n;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: ActionListener_Changed$Params,
      ResultsClass: ActionListener_Changed$Results,
      interfaceId: ActionListener$Client.interfaceId,
      methodId: 0,
      interfaceName: "workspace.capnp:ActionListener",
      methodName: "changed"
    },
    {
      ParamsClass: ActionListener_Missed$Params,
      ResultsClass: ActionListener_Missed$Results,
      interfaceId: ActionListener$Client.interfaceId,
      methodId: 1,
      interfaceName: "workspace.capnp:ActionListener",
      methodName: "missed"
    }
  ];
  changed(paramsFunc) {
    const answer = this.client.call({
      method: ActionListener$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(ActionListener_Changed$Results, answer);
    return new ActionListener_Changed$Results$Promise(pipeline);
  }
  /**
  * Changes were dropped because the listener fell behind: list them again.
  *
  */
  missed(paramsFunc) {
    const answer = this.client.call({
      method: ActionListener$Client.methods[1],
      paramsFunc
    });
    const pipeline = new $.Pipeline(ActionListener_Missed$Results, answer);
    return new ActionListener_Missed$Results$Promise(pipeline);
  }
}
$.Registry.register(ActionListener$Client.interfaceId, ActionListener$Client);
class ActionListener$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...ActionListener$Client.methods[0],
        impl: target.changed
      },
      {
        ...ActionListener$Client.methods[1],
        impl: target.missed
      }
    ]);
    this.target = target;
  }
  client() {
    return new ActionListener$Client(this);
  }
}
class ActionListener extends $.Interface {
  static Client = ActionListener$Client;
  static Server = ActionListener$Server;
  static _capnp = {
    displayName: "ActionListener",
    id: "dc1475800b957866",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "ActionListener_" + super.toString();
  }
}
class Subscription$Client {
  client;
  static interfaceId = 0x800ed120dc7833cen;
  constructor(client) {
    this.client = client;
  }
  static methods = [];
}
$.Registry.register(Subscription$Client.interfaceId, Subscription$Client);
class Subscription$Server extends $.Server {
  target;
  constructor(target) {
    super(target, []);
    this.target = target;
  }
  client() {
    return new Subscription$Client(this);
  }
}
class Subscription extends $.Interface {
  static Client = Subscription$Client;
  static Server = Subscription$Server;
  static _capnp = {
    displayName: "Subscription",
    id: "800ed120dc7833ce",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Subscription_" + super.toString();
  }
}
class BlueprintUpload_Write$Params extends $.Struct {
  static _capnp = {
    displayName: "write$Params",
    id: "bd8c1b43c4eeeb95",
    size: new $.ObjectSize(0, 1)
  };
  _adoptChunk(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownChunk() {
    return $.utils.disown(this.chunk);
  }
  get chunk() {
    return $.utils.getData(0, this);
  }
  _hasChunk() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initChunk(length) {
    return $.utils.initData(0, length, this);
  }
  set chunk(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "BlueprintUpload_Write$Params_" + super.toString();
  }
}
class StreamResult extends $.Struct {
  static _capnp = {
    displayName: "StreamResult",
    id: "995f9a3377c0b16e",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "StreamResult_" + super.toString();
  }
}
class StreamResult$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class BlueprintUpload_Finish$Params extends $.Struct {
  static _capnp = {
    displayName: "finish$Params",
    id: "e8f9b3d025ef1d57",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "BlueprintUpload_Finish$Params_" + super.toString();
  }
}
class BlueprintUpload_Finish$Results extends $.Struct {
  static _capnp = {
    displayName: "finish$Results",
    id: "ca6ca3e22605a056",
    size: new $.ObjectSize(0, 1)
  };
  _adoptInfo(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownInfo() {
    return $.utils.disown(this.info);
  }
  get info() {
    return $.utils.getStruct(0, BlueprintInfo, this);
  }
  _hasInfo() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initInfo() {
    return $.utils.initStructAt(0, BlueprintInfo, this);
  }
  set info(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "BlueprintUpload_Finish$Results_" + super.toString();
  }
}
class BlueprintUpload_Finish$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class BlueprintUpload$Client {
  client;
  static interfaceId = 0x8bb289fc3f0d3273n;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: BlueprintUpload_Write$Params,
      ResultsClass: StreamResult,
      interfaceId: BlueprintUpload$Client.interfaceId,
      methodId: 0,
      interfaceName: "workspace.capnp:BlueprintUpload",
      methodName: "write"
    },
    {
      ParamsClass: BlueprintUpload_Finish$Params,
      ResultsClass: BlueprintUpload_Finish$Results,
      interfaceId: BlueprintUpload$Client.interfaceId,
      methodId: 1,
      interfaceName: "workspace.capnp:BlueprintUpload",
      methodName: "finish"
    }
  ];
  /**
  * Appends `chunk` (at most 64 KiB). Writing past the size given to
  * uploadBlueprint fails, and so does every call after it.
  *
  */
  write(paramsFunc) {
    const answer = this.client.call({
      method: BlueprintUpload$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(StreamResult, answer);
    return new StreamResult$Promise(pipeline);
  }
  /**
  * Checks that exactly the announced size was written, then validates and
  * installs the bundle.
  *
  */
  finish(paramsFunc) {
    const answer = this.client.call({
      method: BlueprintUpload$Client.methods[1],
      paramsFunc
    });
    const pipeline = new $.Pipeline(BlueprintUpload_Finish$Results, answer);
    return new BlueprintUpload_Finish$Results$Promise(pipeline);
  }
}
$.Registry.register(BlueprintUpload$Client.interfaceId, BlueprintUpload$Client);
class BlueprintUpload$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...BlueprintUpload$Client.methods[0],
        impl: target.write
      },
      {
        ...BlueprintUpload$Client.methods[1],
        impl: target.finish
      }
    ]);
    this.target = target;
  }
  client() {
    return new BlueprintUpload$Client(this);
  }
}
class BlueprintUpload extends $.Interface {
  static Client = BlueprintUpload$Client;
  static Server = BlueprintUpload$Server;
  static _capnp = {
    displayName: "BlueprintUpload",
    id: "8bb289fc3f0d3273",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "BlueprintUpload_" + super.toString();
  }
}
class TokenInfo extends $.Struct {
  static _capnp = {
    displayName: "TokenInfo",
    id: "84481826f6ac269c",
    size: new $.ObjectSize(24, 2)
  };
  /**
  * Short public handle, for revokeToken.
  *
  */
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  get label() {
    return $.utils.getText(1, this);
  }
  set label(value) {
    $.utils.setText(1, value, this);
  }
  /**
  * Unix time in milliseconds.
  *
  */
  get createdAt() {
    return $.utils.getInt64(0, this);
  }
  set createdAt(value) {
    $.utils.setInt64(0, value, this);
  }
  /**
  * Unix time in milliseconds; 0 for a token that never expires.
  *
  */
  get expiresAt() {
    return $.utils.getInt64(8, this);
  }
  set expiresAt(value) {
    $.utils.setInt64(8, value, this);
  }
  /**
  * True for the token this workspace was obtained with.
  *
  */
  get current() {
    return $.utils.getBit(128, this);
  }
  set current(value) {
    $.utils.setBit(128, value, this);
  }
  toString() {
    return "TokenInfo_" + super.toString();
  }
}
class Gadget_Info$Params extends $.Struct {
  static _capnp = {
    displayName: "info$Params",
    id: "8c3514c198c855e0",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Info$Params_" + super.toString();
  }
}
class Gadget_Info$Results extends $.Struct {
  static _capnp = {
    displayName: "info$Results",
    id: "beeb81e0b5ade649",
    size: new $.ObjectSize(0, 1)
  };
  _adoptInfo(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownInfo() {
    return $.utils.disown(this.info);
  }
  get info() {
    return $.utils.getStruct(0, GadgetInfo, this);
  }
  _hasInfo() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initInfo() {
    return $.utils.initStructAt(0, GadgetInfo, this);
  }
  set info(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Gadget_Info$Results_" + super.toString();
  }
}
class Gadget_Info$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Open$Params extends $.Struct {
  static _capnp = {
    displayName: "open$Params",
    id: "ce2f13d0a85a04ea",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Open$Params_" + super.toString();
  }
}
class Gadget_Open$Results extends $.Struct {
  static _capnp = {
    displayName: "open$Results",
    id: "9f6cb61df334fc32",
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
    return "Gadget_Open$Results_" + super.toString();
  }
}
class Gadget_Open$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Ui$Params extends $.Struct {
  static _capnp = {
    displayName: "ui$Params",
    id: "8d4f4996f4ffee9f",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Ui$Params_" + super.toString();
  }
}
class Gadget_Ui$Results extends $.Struct {
  static _capnp = {
    displayName: "ui$Results",
    id: "8d95891158d8486b",
    size: new $.ObjectSize(0, 1)
  };
  get html() {
    return $.utils.getText(0, this);
  }
  set html(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Gadget_Ui$Results_" + super.toString();
  }
}
class Gadget_Ui$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Schema$Params extends $.Struct {
  static _capnp = {
    displayName: "schema$Params",
    id: "f4267ab10e0ed767",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Schema$Params_" + super.toString();
  }
}
class Gadget_Schema$Results extends $.Struct {
  static _capnp = {
    displayName: "schema$Results",
    id: "c7b3061d06d5b10f",
    size: new $.ObjectSize(8, 1)
  };
  _adoptNodes(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownNodes() {
    return $.utils.disown(this.nodes);
  }
  get nodes() {
    return $.utils.getData(0, this);
  }
  _hasNodes() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initNodes(length) {
    return $.utils.initData(0, length, this);
  }
  set nodes(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  get sessionInterface() {
    return $.utils.getUint64(0, this);
  }
  set sessionInterface(value) {
    $.utils.setUint64(0, value, this);
  }
  toString() {
    return "Gadget_Schema$Results_" + super.toString();
  }
}
class Gadget_Schema$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Logs$Params extends $.Struct {
  static _capnp = {
    displayName: "logs$Params",
    id: "c3cd082e0639950a",
    size: new $.ObjectSize(8, 0)
  };
  get limit() {
    return $.utils.getUint32(0, this);
  }
  set limit(value) {
    $.utils.setUint32(0, value, this);
  }
  toString() {
    return "Gadget_Logs$Params_" + super.toString();
  }
}
class Gadget_Logs$Results extends $.Struct {
  static _capnp = {
    displayName: "logs$Results",
    id: "de771709d1a68ea4",
    size: new $.ObjectSize(0, 1)
  };
  static _Lines;
  _adoptLines(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownLines() {
    return $.utils.disown(this.lines);
  }
  get lines() {
    return $.utils.getList(0, Gadget_Logs$Results._Lines, this);
  }
  _hasLines() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initLines(length) {
    return $.utils.initList(0, Gadget_Logs$Results._Lines, length, this);
  }
  set lines(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Gadget_Logs$Results_" + super.toString();
  }
}
class Gadget_Logs$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Remove$Params extends $.Struct {
  static _capnp = {
    displayName: "remove$Params",
    id: "c647f092ae9a4df1",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Remove$Params_" + super.toString();
  }
}
class Gadget_Remove$Results extends $.Struct {
  static _capnp = {
    displayName: "remove$Results",
    id: "b07d6193e1f55217",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Remove$Results_" + super.toString();
  }
}
class Gadget_Remove$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_FrameTicket$Params extends $.Struct {
  static _capnp = {
    displayName: "frameTicket$Params",
    id: "fb17e5d85f3fd799",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_FrameTicket$Params_" + super.toString();
  }
}
class Gadget_FrameTicket$Results extends $.Struct {
  static _capnp = {
    displayName: "frameTicket$Results",
    id: "cfb7963602bb1e2f",
    size: new $.ObjectSize(8, 1)
  };
  get ticket() {
    return $.utils.getText(0, this);
  }
  set ticket(value) {
    $.utils.setText(0, value, this);
  }
  get expiresAt() {
    return $.utils.getInt64(0, this);
  }
  set expiresAt(value) {
    $.utils.setInt64(0, value, this);
  }
  toString() {
    return "Gadget_FrameTicket$Results_" + super.toString();
  }
}
class Gadget_FrameTicket$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Bind$Params extends $.Struct {
  static _capnp = {
    displayName: "bind$Params",
    id: "c13f4422db886fc6",
    size: new $.ObjectSize(0, 3)
  };
  get name() {
    return $.utils.getText(0, this);
  }
  set name(value) {
    $.utils.setText(0, value, this);
  }
  get service() {
    return $.utils.getText(1, this);
  }
  set service(value) {
    $.utils.setText(1, value, this);
  }
  get resource() {
    return $.utils.getText(2, this);
  }
  set resource(value) {
    $.utils.setText(2, value, this);
  }
  toString() {
    return "Gadget_Bind$Params_" + super.toString();
  }
}
class Gadget_Bind$Results extends $.Struct {
  static _capnp = {
    displayName: "bind$Results",
    id: "f3cf0dec7dfbf4eb",
    size: new $.ObjectSize(0, 1)
  };
  _adoptBinding(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownBinding() {
    return $.utils.disown(this.binding);
  }
  get binding() {
    return $.utils.getStruct(0, BindingInfo, this);
  }
  _hasBinding() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initBinding() {
    return $.utils.initStructAt(0, BindingInfo, this);
  }
  set binding(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Gadget_Bind$Results_" + super.toString();
  }
}
class Gadget_Bind$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Unbind$Params extends $.Struct {
  static _capnp = {
    displayName: "unbind$Params",
    id: "ea300793e38446ce",
    size: new $.ObjectSize(0, 1)
  };
  get name() {
    return $.utils.getText(0, this);
  }
  set name(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Gadget_Unbind$Params_" + super.toString();
  }
}
class Gadget_Unbind$Results extends $.Struct {
  static _capnp = {
    displayName: "unbind$Results",
    id: "ee322f0b054d960b",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Unbind$Results_" + super.toString();
  }
}
class Gadget_Unbind$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Bindings$Params extends $.Struct {
  static _capnp = {
    displayName: "bindings$Params",
    id: "edec34a80e3a1678",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Bindings$Params_" + super.toString();
  }
}
class Gadget_Bindings$Results extends $.Struct {
  static _capnp = {
    displayName: "bindings$Results",
    id: "cacbfee5f0741c91",
    size: new $.ObjectSize(0, 1)
  };
  static _Bindings;
  _adoptBindings(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownBindings() {
    return $.utils.disown(this.bindings);
  }
  get bindings() {
    return $.utils.getList(0, Gadget_Bindings$Results._Bindings, this);
  }
  _hasBindings() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initBindings(length) {
    return $.utils.initList(0, Gadget_Bindings$Results._Bindings, length, this);
  }
  set bindings(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Gadget_Bindings$Results_" + super.toString();
  }
}
class Gadget_Bindings$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_SetAutoApprove$Params extends $.Struct {
  static _capnp = {
    displayName: "setAutoApprove$Params",
    id: "84e8ad9657cb7097",
    size: new $.ObjectSize(8, 2)
  };
  get binding() {
    return $.utils.getText(0, this);
  }
  set binding(value) {
    $.utils.setText(0, value, this);
  }
  get method() {
    return $.utils.getText(1, this);
  }
  set method(value) {
    $.utils.setText(1, value, this);
  }
  get on() {
    return $.utils.getBit(0, this);
  }
  set on(value) {
    $.utils.setBit(0, value, this);
  }
  toString() {
    return "Gadget_SetAutoApprove$Params_" + super.toString();
  }
}
class Gadget_SetAutoApprove$Results extends $.Struct {
  static _capnp = {
    displayName: "setAutoApprove$Results",
    id: "cbf9b0c4a81ad7f4",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_SetAutoApprove$Results_" + super.toString();
  }
}
class Gadget_SetAutoApprove$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Share$Params extends $.Struct {
  static _capnp = {
    displayName: "share$Params",
    id: "e394cacce7f16a6d",
    size: new $.ObjectSize(8, 1)
  };
  get user() {
    return $.utils.getText(0, this);
  }
  set user(value) {
    $.utils.setText(0, value, this);
  }
  get role() {
    return $.utils.getUint16(0, this);
  }
  set role(value) {
    $.utils.setUint16(0, value, this);
  }
  toString() {
    return "Gadget_Share$Params_" + super.toString();
  }
}
class Gadget_Share$Results extends $.Struct {
  static _capnp = {
    displayName: "share$Results",
    id: "bfa9553cc63d6d0c",
    size: new $.ObjectSize(0, 1)
  };
  _adoptShare(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownShare() {
    return $.utils.disown(this.share);
  }
  get share() {
    return $.utils.getStruct(0, ShareInfo, this);
  }
  _hasShare() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initShare() {
    return $.utils.initStructAt(0, ShareInfo, this);
  }
  set share(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Gadget_Share$Results_" + super.toString();
  }
}
class Gadget_Share$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Unshare$Params extends $.Struct {
  static _capnp = {
    displayName: "unshare$Params",
    id: "b29f6f387df746f5",
    size: new $.ObjectSize(0, 1)
  };
  get user() {
    return $.utils.getText(0, this);
  }
  set user(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Gadget_Unshare$Params_" + super.toString();
  }
}
class Gadget_Unshare$Results extends $.Struct {
  static _capnp = {
    displayName: "unshare$Results",
    id: "b8a6c3ad343d8447",
    size: new $.ObjectSize(8, 0)
  };
  get revoked() {
    return $.utils.getUint32(0, this);
  }
  set revoked(value) {
    $.utils.setUint32(0, value, this);
  }
  toString() {
    return "Gadget_Unshare$Results_" + super.toString();
  }
}
class Gadget_Unshare$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Shares$Params extends $.Struct {
  static _capnp = {
    displayName: "shares$Params",
    id: "c88e2561bed5fcfa",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Shares$Params_" + super.toString();
  }
}
class Gadget_Shares$Results extends $.Struct {
  static _capnp = {
    displayName: "shares$Results",
    id: "88ce1bcecc7a4080",
    size: new $.ObjectSize(0, 1)
  };
  static _Shares;
  _adoptShares(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownShares() {
    return $.utils.disown(this.shares);
  }
  get shares() {
    return $.utils.getList(0, Gadget_Shares$Results._Shares, this);
  }
  _hasShares() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initShares(length) {
    return $.utils.initList(0, Gadget_Shares$Results._Shares, length, this);
  }
  set shares(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Gadget_Shares$Results_" + super.toString();
  }
}
class Gadget_Shares$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_CreateLink$Params extends $.Struct {
  static _capnp = {
    displayName: "createLink$Params",
    id: "cc6ae8d9cb3bf7d7",
    size: new $.ObjectSize(24, 1)
  };
  get role() {
    return $.utils.getUint16(0, this);
  }
  set role(value) {
    $.utils.setUint16(0, value, this);
  }
  get expiresInSeconds() {
    return $.utils.getUint64(8, this);
  }
  set expiresInSeconds(value) {
    $.utils.setUint64(8, value, this);
  }
  get expiresAt() {
    return $.utils.getInt64(16, this);
  }
  set expiresAt(value) {
    $.utils.setInt64(16, value, this);
  }
  get singleUse() {
    return $.utils.getBit(16, this);
  }
  set singleUse(value) {
    $.utils.setBit(16, value, this);
  }
  get label() {
    return $.utils.getText(0, this);
  }
  set label(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Gadget_CreateLink$Params_" + super.toString();
  }
}
class Gadget_CreateLink$Results extends $.Struct {
  static _capnp = {
    displayName: "createLink$Results",
    id: "aa26ce27cac12843",
    size: new $.ObjectSize(0, 2)
  };
  get secret() {
    return $.utils.getText(0, this);
  }
  set secret(value) {
    $.utils.setText(0, value, this);
  }
  _adoptLink(value) {
    $.utils.adopt(value, $.utils.getPointer(1, this));
  }
  _disownLink() {
    return $.utils.disown(this.link);
  }
  get link() {
    return $.utils.getStruct(1, LinkInfo, this);
  }
  _hasLink() {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initLink() {
    return $.utils.initStructAt(1, LinkInfo, this);
  }
  set link(value) {
    $.utils.copyFrom(value, $.utils.getPointer(1, this));
  }
  toString() {
    return "Gadget_CreateLink$Results_" + super.toString();
  }
}
class Gadget_CreateLink$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_Links$Params extends $.Struct {
  static _capnp = {
    displayName: "links$Params",
    id: "9aa087cc082b413a",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_Links$Params_" + super.toString();
  }
}
class Gadget_Links$Results extends $.Struct {
  static _capnp = {
    displayName: "links$Results",
    id: "b891471d4b1637e5",
    size: new $.ObjectSize(0, 1)
  };
  static _Links;
  _adoptLinks(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownLinks() {
    return $.utils.disown(this.links);
  }
  get links() {
    return $.utils.getList(0, Gadget_Links$Results._Links, this);
  }
  _hasLinks() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initLinks(length) {
    return $.utils.initList(0, Gadget_Links$Results._Links, length, this);
  }
  set links(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Gadget_Links$Results_" + super.toString();
  }
}
class Gadget_Links$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget_RevokeLink$Params extends $.Struct {
  static _capnp = {
    displayName: "revokeLink$Params",
    id: "c3bfd7eeb519c16f",
    size: new $.ObjectSize(0, 1)
  };
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "Gadget_RevokeLink$Params_" + super.toString();
  }
}
class Gadget_RevokeLink$Results extends $.Struct {
  static _capnp = {
    displayName: "revokeLink$Results",
    id: "e4e9edd220c8fd08",
    size: new $.ObjectSize(8, 0)
  };
  get revoked() {
    return $.utils.getUint32(0, this);
  }
  set revoked(value) {
    $.utils.setUint32(0, value, this);
  }
  toString() {
    return "Gadget_RevokeLink$Results_" + super.toString();
  }
}
class Gadget_RevokeLink$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gadget$Client {
  client;
  static interfaceId = 0xd9cdd0859b5e76cdn;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: Gadget_Info$Params,
      ResultsClass: Gadget_Info$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 0,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "info"
    },
    {
      ParamsClass: Gadget_Open$Params,
      ResultsClass: Gadget_Open$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 1,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "open"
    },
    {
      ParamsClass: Gadget_Ui$Params,
      ResultsClass: Gadget_Ui$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 2,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "ui"
    },
    {
      ParamsClass: Gadget_Schema$Params,
      ResultsClass: Gadget_Schema$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 3,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "schema"
    },
    {
      ParamsClass: Gadget_Logs$Params,
      ResultsClass: Gadget_Logs$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 4,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "logs"
    },
    {
      ParamsClass: Gadget_Remove$Params,
      ResultsClass: Gadget_Remove$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 5,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "remove"
    },
    {
      ParamsClass: Gadget_FrameTicket$Params,
      ResultsClass: Gadget_FrameTicket$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 6,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "frameTicket"
    },
    {
      ParamsClass: Gadget_Bind$Params,
      ResultsClass: Gadget_Bind$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 7,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "bind"
    },
    {
      ParamsClass: Gadget_Unbind$Params,
      ResultsClass: Gadget_Unbind$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 8,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "unbind"
    },
    {
      ParamsClass: Gadget_Bindings$Params,
      ResultsClass: Gadget_Bindings$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 9,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "bindings"
    },
    {
      ParamsClass: Gadget_SetAutoApprove$Params,
      ResultsClass: Gadget_SetAutoApprove$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 10,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "setAutoApprove"
    },
    {
      ParamsClass: Gadget_Share$Params,
      ResultsClass: Gadget_Share$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 11,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "share"
    },
    {
      ParamsClass: Gadget_Unshare$Params,
      ResultsClass: Gadget_Unshare$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 12,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "unshare"
    },
    {
      ParamsClass: Gadget_Shares$Params,
      ResultsClass: Gadget_Shares$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 13,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "shares"
    },
    {
      ParamsClass: Gadget_CreateLink$Params,
      ResultsClass: Gadget_CreateLink$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 14,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "createLink"
    },
    {
      ParamsClass: Gadget_Links$Params,
      ResultsClass: Gadget_Links$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 15,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "links"
    },
    {
      ParamsClass: Gadget_RevokeLink$Params,
      ResultsClass: Gadget_RevokeLink$Results,
      interfaceId: Gadget$Client.interfaceId,
      methodId: 16,
      interfaceName: "workspace.capnp:Gadget",
      methodName: "revokeLink"
    }
  ];
  info(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Info$Results, answer);
    return new Gadget_Info$Results$Promise(pipeline);
  }
  /**
  * Opens a session: the capability the gadget's guest returned from
  * `Guest.open(caller, context)`. Its interface is the blueprint's session
  * interface (`info.sessionInterface`).
  *
  */
  open(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[1],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Open$Results, answer);
    return new Gadget_Open$Results$Promise(pipeline);
  }
  /**
  * The gadget's UI: one HTML document with its scripts inline, meant for a
  * sandboxed iframe.
  *
  */
  ui(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[2],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Ui$Results, answer);
    return new Gadget_Ui$Results$Promise(pipeline);
  }
  /**
  * The blueprint's compiled schema, as a serialized
  * `capnp.schema.CodeGeneratorRequest`, so that clients without generated
  * code can call the session dynamically.
  *
  */
  schema(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[3],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Schema$Results, answer);
    return new Gadget_Schema$Results$Promise(pipeline);
  }
  /**
  * The newest lines the guest wrote with `Host.log`, oldest first. Editor or
  * owner only.
  *
  */
  logs(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[4],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Logs$Results, answer);
    return new Gadget_Logs$Results$Promise(pipeline);
  }
  /**
  * Deletes the gadget, its storage and its shares. Its creator only: any
  * other role fails with "removing gadget ... needs the owner role", and a
  * user it was shared with as owner with "... only its creator may". A call
  * the gadget is running fails. Every outstanding capability to it, and
  * every session opened from it, fails from then on.
  *
  */
  remove(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[5],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Remove$Results, answer);
    return new Gadget_Remove$Results$Promise(pipeline);
  }
  /**
  * A ticket for one websocket to this gadget's session, for the browser
  * shell to hand its sandboxed frame: `/ws/frame?ticket=...` on the HTTP
  * listener bootstraps straight to a session opened as `open()` opens one,
  * for this user with this role, and reaches nothing else. It is
  * single-use, expires at `expiresAt` (Unix milliseconds; a minute by
  * default), lives in the server's memory only, and is refused once the
  * token this capability was obtained with is revoked or the gadget is
  * removed; revoking that token later cuts the frame's session off too.
  * A user holds a bounded number of unused tickets at once.
  *
  */
  frameTicket(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[6],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_FrameTicket$Results, answer);
    return new Gadget_FrameTicket$Results$Promise(pipeline);
  }
  /**
  * Binds a gatekeeper to this gadget under `name`: one resource (`resource`:
  * a repository "owner/repo", a URL prefix) of one configured service
  * (`Workspace.services`). Inside its sandbox the gadget reaches it by
  * name, with `Host.gatekeeper`. Its creator only: a gatekeeper acts with
  * the creator's authority, and its actions wait for the creator.
  *
  */
  bind(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[7],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Bind$Results, answer);
    return new Gadget_Bind$Results$Promise(pipeline);
  }
  /**
  * Removes a binding. Every reference the gadget holds to it, also one it
  * stored, fails from then on; its actions not yet applied are rejected.
  * Its creator only.
  *
  */
  unbind(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[8],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Unbind$Results, answer);
    return new Gadget_Unbind$Results$Promise(pipeline);
  }
  bindings(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[9],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Bindings$Results, answer);
    return new Gadget_Bindings$Results$Promise(pipeline);
  }
  /**
  * Approves, as they are queued, the actions of one method of one binding
  * (`on`), or stops doing so. Its creator only.
  *
  */
  setAutoApprove(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[10],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_SetAutoApprove$Results, answer);
    return new Gadget_SetAutoApprove$Results$Promise(pipeline);
  }
  /**
  * Shares this gadget with the user whose login name is `user`, at `role`:
  * it appears in their workspace (`Workspace.gadgets`, `Workspace.open`).
  * You may share at most at your own role, and a viewer may not share at
  * all. The share hangs below yours: it ends when yours does, and gives no
  * more than yours does now. Sharing again with a user you shared with
  * replaces the role. Sharing with yourself, with the owner or with a user
  * who does not exist fails with an error that says so.
  *
  */
  share(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[11],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Share$Results, answer);
    return new Gadget_Share$Results$Promise(pipeline);
  }
  /**
  * Revokes the shares you made to `user` or, if you are an owner, every
  * share `user` holds on this gadget; each with every share made on the
  * strength of it (you shared with B and B with C: revoking B's ends C's).
  * The capabilities those users hold to the gadget, their open sessions
  * and those sessions' contexts fail from their next call, disconnected.
  * `revoked` counts the shares ended, those below included. Fails if
  * `user` holds no share of it you may revoke.
  *
  */
  unshare(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[12],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Unshare$Results, answer);
    return new Gadget_Unshare$Results$Promise(pipeline);
  }
  /**
  * Who holds a share of this gadget, from whom, oldest first. Editor or
  * owner only.
  *
  */
  shares(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[13],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Shares$Results, answer);
    return new Gadget_Shares$Results$Promise(pipeline);
  }
  /**
  * Creates a share link: whoever redeems `secret` (`Workspace.redeem`)
  * finds the gadget in their workspace at `role`. The secret is in
  * `secret` and nowhere else (the server keeps a keyed hash): it cannot be
  * shown again. Like a share, a link is at most your own role, a viewer
  * may not create one, and it hangs below your share: the redemptions are
  * worth no more than you hold now, and end when yours does. It expires
  * `expiresInSeconds` from now or at `expiresAt` (Unix milliseconds), at
  * most one of them set; 0 for both: never. Expiry ends redeeming, not
  * what was redeemed. A `singleUse` link is consumed by its first
  * redemption. `label` (at most 200 bytes) is for humans. A gadget, and
  * a user, may have a bounded number of live (redeemable) links.
  *
  */
  createLink(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[14],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_CreateLink$Results, answer);
    return new Gadget_CreateLink$Results$Promise(pipeline);
  }
  /**
  * The links of this gadget, oldest first: an owner sees all, an editor
  * those they created. Never the secrets.
  *
  */
  links(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[15],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_Links$Results, answer);
    return new Gadget_Links$Results$Promise(pipeline);
  }
  /**
  * Revokes a link you created (an owner: any link of this gadget). It can
  * no longer be redeemed, and every redemption of it ends, with every share
  * made on the strength of one, as `unshare` ends a share. `revoked`
  * counts the redemptions and shares ended.
  *
  */
  revokeLink(paramsFunc) {
    const answer = this.client.call({
      method: Gadget$Client.methods[16],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gadget_RevokeLink$Results, answer);
    return new Gadget_RevokeLink$Results$Promise(pipeline);
  }
}
$.Registry.register(Gadget$Client.interfaceId, Gadget$Client);
class Gadget$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...Gadget$Client.methods[0],
        impl: target.info
      },
      {
        ...Gadget$Client.methods[1],
        impl: target.open
      },
      {
        ...Gadget$Client.methods[2],
        impl: target.ui
      },
      {
        ...Gadget$Client.methods[3],
        impl: target.schema
      },
      {
        ...Gadget$Client.methods[4],
        impl: target.logs
      },
      {
        ...Gadget$Client.methods[5],
        impl: target.remove
      },
      {
        ...Gadget$Client.methods[6],
        impl: target.frameTicket
      },
      {
        ...Gadget$Client.methods[7],
        impl: target.bind
      },
      {
        ...Gadget$Client.methods[8],
        impl: target.unbind
      },
      {
        ...Gadget$Client.methods[9],
        impl: target.bindings
      },
      {
        ...Gadget$Client.methods[10],
        impl: target.setAutoApprove
      },
      {
        ...Gadget$Client.methods[11],
        impl: target.share
      },
      {
        ...Gadget$Client.methods[12],
        impl: target.unshare
      },
      {
        ...Gadget$Client.methods[13],
        impl: target.shares
      },
      {
        ...Gadget$Client.methods[14],
        impl: target.createLink
      },
      {
        ...Gadget$Client.methods[15],
        impl: target.links
      },
      {
        ...Gadget$Client.methods[16],
        impl: target.revokeLink
      }
    ]);
    this.target = target;
  }
  client() {
    return new Gadget$Client(this);
  }
}
class Gadget extends $.Interface {
  static Client = Gadget$Client;
  static Server = Gadget$Server;
  static _capnp = {
    displayName: "Gadget",
    id: "d9cdd0859b5e76cd",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gadget_" + super.toString();
  }
}
class LinkInfo extends $.Struct {
  static _capnp = {
    displayName: "LinkInfo",
    id: "def519215bef147b",
    size: new $.ObjectSize(24, 3)
  };
  /**
  * Public handle, for revokeLink.
  *
  */
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  get role() {
    return $.utils.getUint16(0, this);
  }
  set role(value) {
    $.utils.setUint16(0, value, this);
  }
  /**
  * The creator's login name.
  *
  */
  get createdBy() {
    return $.utils.getText(1, this);
  }
  set createdBy(value) {
    $.utils.setText(1, value, this);
  }
  get createdAt() {
    return $.utils.getInt64(8, this);
  }
  set createdAt(value) {
    $.utils.setInt64(8, value, this);
  }
  /**
  * Unix time in milliseconds; 0: never expires.
  *
  */
  get expiresAt() {
    return $.utils.getInt64(16, this);
  }
  set expiresAt(value) {
    $.utils.setInt64(16, value, this);
  }
  get singleUse() {
    return $.utils.getBit(16, this);
  }
  set singleUse(value) {
    $.utils.setBit(16, value, this);
  }
  /**
  * A single-use link that was redeemed.
  *
  */
  get consumed() {
    return $.utils.getBit(17, this);
  }
  set consumed(value) {
    $.utils.setBit(17, value, this);
  }
  get label() {
    return $.utils.getText(2, this);
  }
  set label(value) {
    $.utils.setText(2, value, this);
  }
  /**
  * How many users hold the gadget through it now.
  *
  */
  get redemptions() {
    return $.utils.getUint32(4, this);
  }
  set redemptions(value) {
    $.utils.setUint32(4, value, this);
  }
  toString() {
    return "LinkInfo_" + super.toString();
  }
}
class ShareInfo extends $.Struct {
  static _capnp = {
    displayName: "ShareInfo",
    id: "975908ca517dd1f0",
    size: new $.ObjectSize(16, 2)
  };
  /**
  * The holder's login name.
  *
  */
  get user() {
    return $.utils.getText(0, this);
  }
  set user(value) {
    $.utils.setText(0, value, this);
  }
  /**
  * The role shared. The holder's role is the least along the shares from
  * the owner to them, so it is less than this if a share above gives less.
  *
  */
  get role() {
    return $.utils.getUint16(0, this);
  }
  set role(value) {
    $.utils.setUint16(0, value, this);
  }
  /**
  * The sharer's login name.
  *
  */
  get sharedBy() {
    return $.utils.getText(1, this);
  }
  set sharedBy(value) {
    $.utils.setText(1, value, this);
  }
  /**
  * Unix time in milliseconds of the first share from this sharer to this
  * user (sharing again changes the role, not this).
  *
  */
  get createdAt() {
    return $.utils.getInt64(8, this);
  }
  set createdAt(value) {
    $.utils.setInt64(8, value, this);
  }
  toString() {
    return "ShareInfo_" + super.toString();
  }
}
class ListedGadget extends $.Struct {
  static _capnp = {
    displayName: "ListedGadget",
    id: "aeb8bb7ee3b5526d",
    size: new $.ObjectSize(0, 2)
  };
  /**
  * The gadget, at the role this user has, obtained with the same token as
  * the workspace: revoking the token cuts it off, as it does the workspace.
  *
  */
  get gadget() {
    return new Gadget$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set gadget(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  _adoptInfo(value) {
    $.utils.adopt(value, $.utils.getPointer(1, this));
  }
  _disownInfo() {
    return $.utils.disown(this.info);
  }
  get info() {
    return $.utils.getStruct(1, GadgetInfo, this);
  }
  _hasInfo() {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initInfo() {
    return $.utils.initStructAt(1, GadgetInfo, this);
  }
  set info(value) {
    $.utils.copyFrom(value, $.utils.getPointer(1, this));
  }
  toString() {
    return "ListedGadget_" + super.toString();
  }
}
class GadgetInfo extends $.Struct {
  static _capnp = {
    displayName: "GadgetInfo",
    id: "9114fd5aacb39fdf",
    size: new $.ObjectSize(24, 8)
  };
  static _Permissions;
  static _Roles;
  /**
  * Unguessable id, stable for the gadget's life.
  *
  */
  get id() {
    return $.utils.getText(0, this);
  }
  set id(value) {
    $.utils.setText(0, value, this);
  }
  get name() {
    return $.utils.getText(1, this);
  }
  set name(value) {
    $.utils.setText(1, value, this);
  }
  /**
  * Name of the blueprint it runs.
  *
  */
  get blueprint() {
    return $.utils.getText(2, this);
  }
  set blueprint(value) {
    $.utils.setText(2, value, this);
  }
  /**
  * The version it was created from.
  *
  */
  get blueprintVersion() {
    return $.utils.getText(3, this);
  }
  set blueprintVersion(value) {
    $.utils.setText(3, value, this);
  }
  /**
  * Interface id of the session capability `open()` returns.
  *
  */
  get sessionInterface() {
    return $.utils.getUint64(0, this);
  }
  set sessionInterface(value) {
    $.utils.setUint64(0, value, this);
  }
  /**
  * The caller's role.
  *
  */
  get role() {
    return $.utils.getUint16(8, this);
  }
  set role(value) {
    $.utils.setUint16(8, value, this);
  }
  /**
  * Owner's user name.
  *
  */
  get owner() {
    return $.utils.getText(4, this);
  }
  set owner(value) {
    $.utils.setText(4, value, this);
  }
  /**
  * Unix time in milliseconds.
  *
  */
  get createdAt() {
    return $.utils.getInt64(16, this);
  }
  set createdAt(value) {
    $.utils.setInt64(16, value, this);
  }
  /**
  * For a gadget shared with the caller: the login name of who shared it
  * (of the share the caller's role comes through). Empty for their own.
  *
  */
  get sharedBy() {
    return $.utils.getText(5, this);
  }
  set sharedBy(value) {
    $.utils.setText(5, value, this);
  }
  _adoptPermissions(value) {
    $.utils.adopt(value, $.utils.getPointer(6, this));
  }
  _disownPermissions() {
    return $.utils.disown(this.permissions);
  }
  get permissions() {
    return $.utils.getList(6, GadgetInfo._Permissions, this);
  }
  _hasPermissions() {
    return !$.utils.isNull($.utils.getPointer(6, this));
  }
  _initPermissions(length) {
    return $.utils.initList(6, GadgetInfo._Permissions, length, this);
  }
  set permissions(value) {
    $.utils.copyFrom(value, $.utils.getPointer(6, this));
  }
  _adoptRoles(value) {
    $.utils.adopt(value, $.utils.getPointer(7, this));
  }
  _disownRoles() {
    return $.utils.disown(this.roles);
  }
  /**
  * What the gadget's own blueprint version declares (Blueprint.permissions
  * and .roles), so whoever shares it can say what each role may do. In
  * the answers about one gadget (Gadget.info, Workspace.create and
  * .redeem); empty in Workspace.gadgets, whose answer stays small however
  * many gadgets others share with a user.
  *
  */
  get roles() {
    return $.utils.getList(7, GadgetInfo._Roles, this);
  }
  _hasRoles() {
    return !$.utils.isNull($.utils.getPointer(7, this));
  }
  _initRoles(length) {
    return $.utils.initList(7, GadgetInfo._Roles, length, this);
  }
  set roles(value) {
    $.utils.copyFrom(value, $.utils.getPointer(7, this));
  }
  toString() {
    return "GadgetInfo_" + super.toString();
  }
}
class LogLine extends $.Struct {
  static _capnp = {
    displayName: "LogLine",
    id: "aada6a96093bc212",
    size: new $.ObjectSize(16, 1)
  };
  /**
  * Unix time in milliseconds.
  *
  */
  get time() {
    return $.utils.getInt64(0, this);
  }
  set time(value) {
    $.utils.setInt64(0, value, this);
  }
  get level() {
    return $.utils.getUint16(8, this);
  }
  set level(value) {
    $.utils.setUint16(8, value, this);
  }
  get text() {
    return $.utils.getText(0, this);
  }
  set text(value) {
    $.utils.setText(0, value, this);
  }
  toString() {
    return "LogLine_" + super.toString();
  }
}
class BlueprintInfo extends $.Struct {
  static _capnp = {
    displayName: "BlueprintInfo",
    id: "af1513bffaee87c4",
    size: new $.ObjectSize(16, 6)
  };
  static _Bindings;
  static _Permissions;
  static _Roles;
  get name() {
    return $.utils.getText(0, this);
  }
  set name(value) {
    $.utils.setText(0, value, this);
  }
  get version() {
    return $.utils.getText(1, this);
  }
  set version(value) {
    $.utils.setText(1, value, this);
  }
  get description() {
    return $.utils.getText(2, this);
  }
  set description(value) {
    $.utils.setText(2, value, this);
  }
  get sessionInterface() {
    return $.utils.getUint64(0, this);
  }
  set sessionInterface(value) {
    $.utils.setUint64(0, value, this);
  }
  /**
  * True for blueprints that ship with the server.
  *
  */
  get builtin() {
    return $.utils.getBit(64, this);
  }
  set builtin(value) {
    $.utils.setBit(64, value, this);
  }
  _adoptBindings(value) {
    $.utils.adopt(value, $.utils.getPointer(3, this));
  }
  _disownBindings() {
    return $.utils.disown(this.bindings);
  }
  /**
  * The gatekeepers its gadgets ask to be bound to.
  *
  */
  get bindings() {
    return $.utils.getList(3, BlueprintInfo._Bindings, this);
  }
  _hasBindings() {
    return !$.utils.isNull($.utils.getPointer(3, this));
  }
  _initBindings(length) {
    return $.utils.initList(3, BlueprintInfo._Bindings, length, this);
  }
  set bindings(value) {
    $.utils.copyFrom(value, $.utils.getPointer(3, this));
  }
  _adoptPermissions(value) {
    $.utils.adopt(value, $.utils.getPointer(4, this));
  }
  _disownPermissions() {
    return $.utils.disown(this.permissions);
  }
  get permissions() {
    return $.utils.getList(4, BlueprintInfo._Permissions, this);
  }
  _hasPermissions() {
    return !$.utils.isNull($.utils.getPointer(4, this));
  }
  _initPermissions(length) {
    return $.utils.initList(4, BlueprintInfo._Permissions, length, this);
  }
  set permissions(value) {
    $.utils.copyFrom(value, $.utils.getPointer(4, this));
  }
  _adoptRoles(value) {
    $.utils.adopt(value, $.utils.getPointer(5, this));
  }
  _disownRoles() {
    return $.utils.disown(this.roles);
  }
  /**
  * As the blueprint declares them (Blueprint.permissions and .roles), so
  * a user sharing a gadget can say what each role may do.
  *
  */
  get roles() {
    return $.utils.getList(5, BlueprintInfo._Roles, this);
  }
  _hasRoles() {
    return !$.utils.isNull($.utils.getPointer(5, this));
  }
  _initRoles(length) {
    return $.utils.initList(5, BlueprintInfo._Roles, length, this);
  }
  set roles(value) {
    $.utils.copyFrom(value, $.utils.getPointer(5, this));
  }
  toString() {
    return "BlueprintInfo_" + super.toString();
  }
}
class BindingRequest extends $.Struct {
  static _capnp = {
    displayName: "BindingRequest",
    id: "b2ee953466800989",
    size: new $.ObjectSize(0, 3)
  };
  /**
  * The name the gadget asks `Host.gatekeeper` for.
  *
  */
  get name() {
    return $.utils.getText(0, this);
  }
  set name(value) {
    $.utils.setText(0, value, this);
  }
  /**
  * The kind of gatekeeper: "github", "http".
  *
  */
  get kind() {
    return $.utils.getText(1, this);
  }
  set kind(value) {
    $.utils.setText(1, value, this);
  }
  /**
  * What the gadget does with it, for the user deciding.
  *
  */
  get why() {
    return $.utils.getText(2, this);
  }
  set why(value) {
    $.utils.setText(2, value, this);
  }
  toString() {
    return "BindingRequest_" + super.toString();
  }
}
class Blueprint extends $.Struct {
  static _capnp = {
    displayName: "Blueprint",
    id: "d8239a496365a923",
    size: new $.ObjectSize(8, 10)
  };
  static _Bindings;
  static _Permissions;
  static _Roles;
  /**
  * Lower-case letters, digits and dashes; 1 to 64 characters.
  *
  */
  get name() {
    return $.utils.getText(0, this);
  }
  set name(value) {
    $.utils.setText(0, value, this);
  }
  get version() {
    return $.utils.getText(1, this);
  }
  set version(value) {
    $.utils.setText(1, value, this);
  }
  get description() {
    return $.utils.getText(2, this);
  }
  set description(value) {
    $.utils.setText(2, value, this);
  }
  /**
  * Id of the interface `Guest.open` returns; must be an interface in
  * `schemaNodes`.
  *
  */
  get sessionInterface() {
    return $.utils.getUint64(0, this);
  }
  set sessionInterface(value) {
    $.utils.setUint64(0, value, this);
  }
  _adoptWasm(value) {
    $.utils.adopt(value, $.utils.getPointer(3, this));
  }
  _disownWasm() {
    return $.utils.disown(this.wasm);
  }
  /**
  * The guest, a wasip1 reactor module exporting the ABI in docs/ABI.md.
  *
  */
  get wasm() {
    return $.utils.getData(3, this);
  }
  _hasWasm() {
    return !$.utils.isNull($.utils.getPointer(3, this));
  }
  _initWasm(length) {
    return $.utils.initData(3, length, this);
  }
  set wasm(value) {
    $.utils.copyFrom(value, $.utils.getPointer(3, this));
  }
  /**
  * One HTML document, scripts inline.
  *
  */
  get ui() {
    return $.utils.getText(4, this);
  }
  set ui(value) {
    $.utils.setText(4, value, this);
  }
  /**
  * The .capnp source of the session interface, for humans.
  *
  */
  get schemaSource() {
    return $.utils.getText(5, this);
  }
  set schemaSource(value) {
    $.utils.setText(5, value, this);
  }
  _adoptSchemaNodes(value) {
    $.utils.adopt(value, $.utils.getPointer(6, this));
  }
  _disownSchemaNodes() {
    return $.utils.disown(this.schemaNodes);
  }
  /**
  * The compiled schema: a serialized capnp.schema.CodeGeneratorRequest
  * (`capnp compile -o- file.capnp`).
  *
  */
  get schemaNodes() {
    return $.utils.getData(6, this);
  }
  _hasSchemaNodes() {
    return !$.utils.isNull($.utils.getPointer(6, this));
  }
  _initSchemaNodes(length) {
    return $.utils.initData(6, length, this);
  }
  set schemaNodes(value) {
    $.utils.copyFrom(value, $.utils.getPointer(6, this));
  }
  _adoptBindings(value) {
    $.utils.adopt(value, $.utils.getPointer(7, this));
  }
  _disownBindings() {
    return $.utils.disown(this.bindings);
  }
  /**
  * The bindings its gadgets ask for.
  *
  */
  get bindings() {
    return $.utils.getList(7, Blueprint._Bindings, this);
  }
  _hasBindings() {
    return !$.utils.isNull($.utils.getPointer(7, this));
  }
  _initBindings(length) {
    return $.utils.initList(7, Blueprint._Bindings, length, this);
  }
  set bindings(value) {
    $.utils.copyFrom(value, $.utils.getPointer(7, this));
  }
  _adoptPermissions(value) {
    $.utils.adopt(value, $.utils.getPointer(8, this));
  }
  _disownPermissions() {
    return $.utils.disown(this.permissions);
  }
  /**
  * The blueprint's own permissions (blueprint.json's "permissions"), which
  * the guest checks in `Caller.permissions`. At most 32.
  *
  */
  get permissions() {
    return $.utils.getList(8, Blueprint._Permissions, this);
  }
  _hasPermissions() {
    return !$.utils.isNull($.utils.getPointer(8, this));
  }
  _initPermissions(length) {
    return $.utils.initList(8, Blueprint._Permissions, length, this);
  }
  set permissions(value) {
    $.utils.copyFrom(value, $.utils.getPointer(8, this));
  }
  _adoptRoles(value) {
    $.utils.adopt(value, $.utils.getPointer(9, this));
  }
  _disownRoles() {
    return $.utils.disown(this.roles);
  }
  /**
  * Which of `permissions` the viewer and editor roles bundle
  * (blueprint.json's "roles"). An owner holds them all; a role holds what
  * the roles below it hold.
  *
  */
  get roles() {
    return $.utils.getList(9, Blueprint._Roles, this);
  }
  _hasRoles() {
    return !$.utils.isNull($.utils.getPointer(9, this));
  }
  _initRoles(length) {
    return $.utils.initList(9, Blueprint._Roles, length, this);
  }
  set roles(value) {
    $.utils.copyFrom(value, $.utils.getPointer(9, this));
  }
  toString() {
    return "Blueprint_" + super.toString();
  }
}
class PermissionDef extends $.Struct {
  static _capnp = {
    displayName: "PermissionDef",
    id: "af0242b84a7f07ad",
    size: new $.ObjectSize(0, 3)
  };
  /**
  * What the guest checks: 1 to 32 lower-case letters, digits and dashes,
  * starting with a letter.
  *
  */
  get name() {
    return $.utils.getText(0, this);
  }
  set name(value) {
    $.utils.setText(0, value, this);
  }
  get title() {
    return $.utils.getText(1, this);
  }
  set title(value) {
    $.utils.setText(1, value, this);
  }
  /**
  * For the people who share the gadget.
  *
  */
  get description() {
    return $.utils.getText(2, this);
  }
  set description(value) {
    $.utils.setText(2, value, this);
  }
  toString() {
    return "PermissionDef_" + super.toString();
  }
}
class RoleDef extends $.Struct {
  static _capnp = {
    displayName: "RoleDef",
    id: "d318c0b6a1028948",
    size: new $.ObjectSize(8, 1)
  };
  /**
  * viewer or editor.
  *
  */
  get role() {
    return $.utils.getUint16(0, this);
  }
  set role(value) {
    $.utils.setUint16(0, value, this);
  }
  _adoptPermissions(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownPermissions() {
    return $.utils.disown(this.permissions);
  }
  /**
  * Names from Blueprint.permissions.
  *
  */
  get permissions() {
    return $.utils.getList(0, $.TextList, this);
  }
  _hasPermissions() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initPermissions(length) {
    return $.utils.initList(0, $.TextList, length, this);
  }
  set permissions(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "RoleDef_" + super.toString();
  }
}
Workspace_Blueprints$Results._Blueprints = $.CompositeList(BlueprintInfo);
Workspace_Gadgets$Results._Gadgets = $.CompositeList(ListedGadget);
Workspace_Tokens$Results._Tokens = $.CompositeList(TokenInfo);
Workspace_Services$Results._Services = $.CompositeList(ServiceInfo);
Workspace_Actions$Results._Actions = $.CompositeList(ActionInfo);
Workspace_Decide$Results._Decisions = $.CompositeList(Decision);
Workspace_Audit$Results._Entries = $.CompositeList(AuditEntry);
Workspace_Saved$Results._Saved = $.CompositeList(SavedInfo);
Gadget_Logs$Results._Lines = $.CompositeList(LogLine);
Gadget_Bindings$Results._Bindings = $.CompositeList(BindingInfo);
Gadget_Shares$Results._Shares = $.CompositeList(ShareInfo);
Gadget_Links$Results._Links = $.CompositeList(LinkInfo);
GadgetInfo._Permissions = $.CompositeList(PermissionDef);
GadgetInfo._Roles = $.CompositeList(RoleDef);
BlueprintInfo._Bindings = $.CompositeList(BindingRequest);
BlueprintInfo._Permissions = $.CompositeList(PermissionDef);
BlueprintInfo._Roles = $.CompositeList(RoleDef);
Blueprint._Bindings = $.CompositeList(BindingRequest);
Blueprint._Permissions = $.CompositeList(PermissionDef);
Blueprint._Roles = $.CompositeList(RoleDef);
export {
  ActionFilter,
  ActionInfo,
  ActionListener,
  ActionListener$Client,
  ActionListener$Server,
  ActionListener_Changed$Params,
  ActionListener_Changed$Results,
  ActionListener_Changed$Results$Promise,
  ActionListener_Missed$Params,
  ActionListener_Missed$Results,
  ActionListener_Missed$Results$Promise,
  ActionState,
  AuditEntry,
  AuditFilter,
  BindingInfo,
  BindingRequest,
  Blueprint,
  BlueprintInfo,
  BlueprintUpload,
  BlueprintUpload$Client,
  BlueprintUpload$Server,
  BlueprintUpload_Finish$Params,
  BlueprintUpload_Finish$Results,
  BlueprintUpload_Finish$Results$Promise,
  BlueprintUpload_Write$Params,
  Decision,
  Gadget,
  Gadget$Client,
  Gadget$Server,
  GadgetInfo,
  Gadget_Bind$Params,
  Gadget_Bind$Results,
  Gadget_Bind$Results$Promise,
  Gadget_Bindings$Params,
  Gadget_Bindings$Results,
  Gadget_Bindings$Results$Promise,
  Gadget_CreateLink$Params,
  Gadget_CreateLink$Results,
  Gadget_CreateLink$Results$Promise,
  Gadget_FrameTicket$Params,
  Gadget_FrameTicket$Results,
  Gadget_FrameTicket$Results$Promise,
  Gadget_Info$Params,
  Gadget_Info$Results,
  Gadget_Info$Results$Promise,
  Gadget_Links$Params,
  Gadget_Links$Results,
  Gadget_Links$Results$Promise,
  Gadget_Logs$Params,
  Gadget_Logs$Results,
  Gadget_Logs$Results$Promise,
  Gadget_Open$Params,
  Gadget_Open$Results,
  Gadget_Open$Results$Promise,
  Gadget_Remove$Params,
  Gadget_Remove$Results,
  Gadget_Remove$Results$Promise,
  Gadget_RevokeLink$Params,
  Gadget_RevokeLink$Results,
  Gadget_RevokeLink$Results$Promise,
  Gadget_Schema$Params,
  Gadget_Schema$Results,
  Gadget_Schema$Results$Promise,
  Gadget_SetAutoApprove$Params,
  Gadget_SetAutoApprove$Results,
  Gadget_SetAutoApprove$Results$Promise,
  Gadget_Share$Params,
  Gadget_Share$Results,
  Gadget_Share$Results$Promise,
  Gadget_Shares$Params,
  Gadget_Shares$Results,
  Gadget_Shares$Results$Promise,
  Gadget_Ui$Params,
  Gadget_Ui$Results,
  Gadget_Ui$Results$Promise,
  Gadget_Unbind$Params,
  Gadget_Unbind$Results,
  Gadget_Unbind$Results$Promise,
  Gadget_Unshare$Params,
  Gadget_Unshare$Results,
  Gadget_Unshare$Results$Promise,
  Gateway,
  Gateway$Client,
  Gateway$Server,
  Gateway_Login$Params,
  Gateway_Login$Results,
  Gateway_Login$Results$Promise,
  Gateway_Restore$Params,
  Gateway_Restore$Results,
  Gateway_Restore$Results$Promise,
  LinkInfo,
  ListedGadget,
  LogLine,
  PermissionDef,
  RoleDef,
  SavedInfo,
  SavedKind,
  ServiceInfo,
  ShareInfo,
  StreamResult,
  StreamResult$Promise,
  Subscription,
  Subscription$Client,
  Subscription$Server,
  TokenInfo,
  UserInfo,
  Workspace,
  Workspace$Client,
  Workspace$Server,
  Workspace_Actions$Params,
  Workspace_Actions$Results,
  Workspace_Actions$Results$Promise,
  Workspace_Audit$Params,
  Workspace_Audit$Results,
  Workspace_Audit$Results$Promise,
  Workspace_Blueprints$Params,
  Workspace_Blueprints$Results,
  Workspace_Blueprints$Results$Promise,
  Workspace_Create$Params,
  Workspace_Create$Results,
  Workspace_Create$Results$Promise,
  Workspace_Decide$Params,
  Workspace_Decide$Results,
  Workspace_Decide$Results$Promise,
  Workspace_DropSaved$Params,
  Workspace_DropSaved$Results,
  Workspace_DropSaved$Results$Promise,
  Workspace_Gadgets$Params,
  Workspace_Gadgets$Results,
  Workspace_Gadgets$Results$Promise,
  Workspace_GatekeeperSchema$Params,
  Workspace_GatekeeperSchema$Results,
  Workspace_GatekeeperSchema$Results$Promise,
  Workspace_InstallBlueprint$Params,
  Workspace_InstallBlueprint$Results,
  Workspace_InstallBlueprint$Results$Promise,
  Workspace_NewToken$Params,
  Workspace_NewToken$Results,
  Workspace_NewToken$Results$Promise,
  Workspace_ObsoleteRemove$Params,
  Workspace_ObsoleteRemove$Results,
  Workspace_ObsoleteRemove$Results$Promise,
  Workspace_Open$Params,
  Workspace_Open$Results,
  Workspace_Open$Results$Promise,
  Workspace_Redeem$Params,
  Workspace_Redeem$Results,
  Workspace_Redeem$Results$Promise,
  Workspace_RevokeToken$Params,
  Workspace_RevokeToken$Results,
  Workspace_RevokeToken$Results$Promise,
  Workspace_Saved$Params,
  Workspace_Saved$Results,
  Workspace_Saved$Results$Promise,
  Workspace_Services$Params,
  Workspace_Services$Results,
  Workspace_Services$Results$Promise,
  Workspace_Tokens$Params,
  Workspace_Tokens$Results,
  Workspace_Tokens$Results$Promise,
  Workspace_UploadBlueprint$Params,
  Workspace_UploadBlueprint$Results,
  Workspace_UploadBlueprint$Results$Promise,
  Workspace_WatchActions$Params,
  Workspace_WatchActions$Results,
  Workspace_WatchActions$Results$Promise,
  _capnpFileId
};
