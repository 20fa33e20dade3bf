import * as $ from "capnp-es";
const _capnpFileId = 0x8cfacb334bab4fcan;
class Gatekeeper_Description extends $.Struct {
  static _capnp = {
    displayName: "Description",
    id: "c319a00ad301479a",
    size: new $.ObjectSize(0, 3)
  };
  /**
  * The gatekeeper kind, for example "http" or "github".
  *
  */
  get kind() {
    return $.utils.getText(0, this);
  }
  set kind(value) {
    $.utils.setText(0, value, this);
  }
  /**
  * The one resource it grants access to, for example a URL prefix or an
  * "owner/repo" name.
  *
  */
  get resource() {
    return $.utils.getText(1, this);
  }
  set resource(value) {
    $.utils.setText(1, value, this);
  }
  /**
  * The name the gadget knows it by.
  *
  */
  get bindingName() {
    return $.utils.getText(2, this);
  }
  set bindingName(value) {
    $.utils.setText(2, value, this);
  }
  toString() {
    return "Gatekeeper_Description_" + super.toString();
  }
}
class Gatekeeper_Describe$Params extends $.Struct {
  static _capnp = {
    displayName: "describe$Params",
    id: "8fd8d0aba75768be",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gatekeeper_Describe$Params_" + super.toString();
  }
}
class Gatekeeper_Describe$Results extends $.Struct {
  static _capnp = {
    displayName: "describe$Results",
    id: "ef0b38eb75750172",
    size: new $.ObjectSize(0, 1)
  };
  _adoptDescription(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownDescription() {
    return $.utils.disown(this.description);
  }
  get description() {
    return $.utils.getStruct(0, Gatekeeper_Description, this);
  }
  _hasDescription() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initDescription() {
    return $.utils.initStructAt(0, Gatekeeper_Description, this);
  }
  set description(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Gatekeeper_Describe$Results_" + super.toString();
  }
}
class Gatekeeper_Describe$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Gatekeeper$Client {
  client;
  static interfaceId = 0x94841423a66a6f08n;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: Gatekeeper_Describe$Params,
      ResultsClass: Gatekeeper_Describe$Results,
      interfaceId: Gatekeeper$Client.interfaceId,
      methodId: 0,
      interfaceName: "gatekeeper.capnp:Gatekeeper",
      methodName: "describe"
    }
  ];
  /**
  * What this gatekeeper is and what it grants.
  *
  */
  describe(paramsFunc) {
    const answer = this.client.call({
      method: Gatekeeper$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Gatekeeper_Describe$Results, answer);
    return new Gatekeeper_Describe$Results$Promise(pipeline);
  }
}
$.Registry.register(Gatekeeper$Client.interfaceId, Gatekeeper$Client);
class Gatekeeper$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...Gatekeeper$Client.methods[0],
        impl: target.describe
      }
    ]);
    this.target = target;
  }
  client() {
    return new Gatekeeper$Client(this);
  }
}
class Gatekeeper extends $.Interface {
  static Description = Gatekeeper_Description;
  static Client = Gatekeeper$Client;
  static Server = Gatekeeper$Server;
  static _capnp = {
    displayName: "Gatekeeper",
    id: "94841423a66a6f08",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Gatekeeper_" + super.toString();
  }
}
export {
  Gatekeeper,
  Gatekeeper$Client,
  Gatekeeper$Server,
  Gatekeeper_Describe$Params,
  Gatekeeper_Describe$Results,
  Gatekeeper_Describe$Results$Promise,
  Gatekeeper_Description,
  _capnpFileId
};
