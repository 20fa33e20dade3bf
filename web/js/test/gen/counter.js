import * as $ from "capnp-es";
const _capnpFileId = 0x91298a900953755fn;
class Counter_Increment$Params extends $.Struct {
  static _capnp = {
    displayName: "increment$Params",
    id: "bf62faa0adf649eb",
    size: new $.ObjectSize(8, 0)
  };
  get by() {
    return $.utils.getInt64(0, this);
  }
  set by(value) {
    $.utils.setInt64(0, value, this);
  }
  toString() {
    return "Counter_Increment$Params_" + super.toString();
  }
}
class Counter_Increment$Results extends $.Struct {
  static _capnp = {
    displayName: "increment$Results",
    id: "d7b3435f75a20cc5",
    size: new $.ObjectSize(8, 0)
  };
  get value() {
    return $.utils.getInt64(0, this);
  }
  set value(value) {
    $.utils.setInt64(0, value, this);
  }
  toString() {
    return "Counter_Increment$Results_" + super.toString();
  }
}
class Counter_Increment$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Counter_Get$Params extends $.Struct {
  static _capnp = {
    displayName: "get$Params",
    id: "d146274bd7500676",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Counter_Get$Params_" + super.toString();
  }
}
class Counter_Get$Results extends $.Struct {
  static _capnp = {
    displayName: "get$Results",
    id: "ab942a6b0fcd38e9",
    size: new $.ObjectSize(8, 0)
  };
  get value() {
    return $.utils.getInt64(0, this);
  }
  set value(value) {
    $.utils.setInt64(0, value, this);
  }
  toString() {
    return "Counter_Get$Results_" + super.toString();
  }
}
class Counter_Get$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Counter_Watch$Params extends $.Struct {
  static _capnp = {
    displayName: "watch$Params",
    id: "927cc01230495fce",
    size: new $.ObjectSize(0, 1)
  };
  get listener() {
    return new Listener$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set listener(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  toString() {
    return "Counter_Watch$Params_" + super.toString();
  }
}
class Counter_Watch$Results extends $.Struct {
  static _capnp = {
    displayName: "watch$Results",
    id: "ebeb241eb321bfce",
    size: new $.ObjectSize(8, 1)
  };
  get value() {
    return $.utils.getInt64(0, this);
  }
  set value(value) {
    $.utils.setInt64(0, value, this);
  }
  get handle() {
    return new Handle$Client($.utils.getInterfaceClientOrNullAt(0, this));
  }
  set handle(value) {
    $.utils.setInterfacePointer(this.segment.message.addCap(value.client), $.utils.getPointer(0, this));
  }
  toString() {
    return "Counter_Watch$Results_" + super.toString();
  }
}
class Counter_Watch$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  getHandle() {
    return new Handle$Client(this.pipeline.getPipeline(Handle, 0).client());
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Counter_Present$Params extends $.Struct {
  static _capnp = {
    displayName: "present$Params",
    id: "d039966406b30c36",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Counter_Present$Params_" + super.toString();
  }
}
class Counter_Present$Results extends $.Struct {
  static _capnp = {
    displayName: "present$Results",
    id: "804378ddf6fc5362",
    size: new $.ObjectSize(0, 1)
  };
  _adoptUserNames(value) {
    $.utils.adopt(value, $.utils.getPointer(0, this));
  }
  _disownUserNames() {
    return $.utils.disown(this.userNames);
  }
  get userNames() {
    return $.utils.getList(0, $.TextList, this);
  }
  _hasUserNames() {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initUserNames(length) {
    return $.utils.initList(0, $.TextList, length, this);
  }
  set userNames(value) {
    $.utils.copyFrom(value, $.utils.getPointer(0, this));
  }
  toString() {
    return "Counter_Present$Results_" + super.toString();
  }
}
class Counter_Present$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Counter$Client {
  client;
  static interfaceId = 0x9e2b9404c4991f3cn;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: Counter_Increment$Params,
      ResultsClass: Counter_Increment$Results,
      interfaceId: Counter$Client.interfaceId,
      methodId: 0,
      interfaceName: "counter.capnp:Counter",
      methodName: "increment"
    },
    {
      ParamsClass: Counter_Get$Params,
      ResultsClass: Counter_Get$Results,
      interfaceId: Counter$Client.interfaceId,
      methodId: 1,
      interfaceName: "counter.capnp:Counter",
      methodName: "get"
    },
    {
      ParamsClass: Counter_Watch$Params,
      ResultsClass: Counter_Watch$Results,
      interfaceId: Counter$Client.interfaceId,
      methodId: 2,
      interfaceName: "counter.capnp:Counter",
      methodName: "watch"
    },
    {
      ParamsClass: Counter_Present$Params,
      ResultsClass: Counter_Present$Results,
      interfaceId: Counter$Client.interfaceId,
      methodId: 3,
      interfaceName: "counter.capnp:Counter",
      methodName: "present"
    }
  ];
  /**
  * Adds `by` (1 when zero) and returns the new value. Every watcher is told
  * about the new value before increment returns.
  *
  */
  increment(paramsFunc) {
    const answer = this.client.call({
      method: Counter$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Counter_Increment$Results, answer);
    return new Counter_Increment$Results$Promise(pipeline);
  }
  /**
  * The current value.
  *
  */
  get(paramsFunc) {
    const answer = this.client.call({
      method: Counter$Client.methods[1],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Counter_Get$Results, answer);
    return new Counter_Get$Results$Promise(pipeline);
  }
  /**
  * Subscribes `listener` to every later change and returns the current
  * value. The subscription lasts while you hold `handle`: drop it to
  * unsubscribe. Your listener being released means the subscription ended:
  * you dropped the handle, a call to the listener failed, or the instance
  * that held it stopped (evicted when idle, crashed, the server shut down).
  * Watch again to go on hearing.
  *
  */
  watch(paramsFunc) {
    const answer = this.client.call({
      method: Counter$Client.methods[2],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Counter_Watch$Results, answer);
    return new Counter_Watch$Results$Promise(pipeline);
  }
  /**
  * The names of the users whose sessions are open on this instance, asked
  * of each session's SessionContext now rather than remembered: a session
  * whose token was revoked since it opened is left out.
  *
  */
  present(paramsFunc) {
    const answer = this.client.call({
      method: Counter$Client.methods[3],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Counter_Present$Results, answer);
    return new Counter_Present$Results$Promise(pipeline);
  }
}
$.Registry.register(Counter$Client.interfaceId, Counter$Client);
class Counter$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...Counter$Client.methods[0],
        impl: target.increment
      },
      {
        ...Counter$Client.methods[1],
        impl: target.get
      },
      {
        ...Counter$Client.methods[2],
        impl: target.watch
      },
      {
        ...Counter$Client.methods[3],
        impl: target.present
      }
    ]);
    this.target = target;
  }
  client() {
    return new Counter$Client(this);
  }
}
class Counter extends $.Interface {
  static Client = Counter$Client;
  static Server = Counter$Server;
  static _capnp = {
    displayName: "Counter",
    id: "9e2b9404c4991f3c",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Counter_" + super.toString();
  }
}
class Handle$Client {
  client;
  static interfaceId = 0x916f40f0a037f11fn;
  constructor(client) {
    this.client = client;
  }
  static methods = [];
}
$.Registry.register(Handle$Client.interfaceId, Handle$Client);
class Handle$Server extends $.Server {
  target;
  constructor(target) {
    super(target, []);
    this.target = target;
  }
  client() {
    return new Handle$Client(this);
  }
}
class Handle extends $.Interface {
  static Client = Handle$Client;
  static Server = Handle$Server;
  static _capnp = {
    displayName: "Handle",
    id: "916f40f0a037f11f",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Handle_" + super.toString();
  }
}
class Listener_Changed$Params extends $.Struct {
  static _capnp = {
    displayName: "changed$Params",
    id: "d0ca3baab545e535",
    size: new $.ObjectSize(8, 0)
  };
  get value() {
    return $.utils.getInt64(0, this);
  }
  set value(value) {
    $.utils.setInt64(0, value, this);
  }
  toString() {
    return "Listener_Changed$Params_" + super.toString();
  }
}
class Listener_Changed$Results extends $.Struct {
  static _capnp = {
    displayName: "changed$Results",
    id: "a547115d75fdc7d0",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Listener_Changed$Results_" + super.toString();
  }
}
class Listener_Changed$Results$Promise {
  pipeline;
  constructor(pipeline) {
    this.pipeline = pipeline;
  }
  async promise() {
    return await this.pipeline.struct();
  }
}
class Listener$Client {
  client;
  static interfaceId = 0xc11496942f44f816n;
  constructor(client) {
    this.client = client;
  }
  static methods = [
    {
      ParamsClass: Listener_Changed$Params,
      ResultsClass: Listener_Changed$Results,
      interfaceId: Listener$Client.interfaceId,
      methodId: 0,
      interfaceName: "counter.capnp:Listener",
      methodName: "changed"
    }
  ];
  changed(paramsFunc) {
    const answer = this.client.call({
      method: Listener$Client.methods[0],
      paramsFunc
    });
    const pipeline = new $.Pipeline(Listener_Changed$Results, answer);
    return new Listener_Changed$Results$Promise(pipeline);
  }
}
$.Registry.register(Listener$Client.interfaceId, Listener$Client);
class Listener$Server extends $.Server {
  target;
  constructor(target) {
    super(target, [
      {
        ...Listener$Client.methods[0],
        impl: target.changed
      }
    ]);
    this.target = target;
  }
  client() {
    return new Listener$Client(this);
  }
}
class Listener extends $.Interface {
  static Client = Listener$Client;
  static Server = Listener$Server;
  static _capnp = {
    displayName: "Listener",
    id: "c11496942f44f816",
    size: new $.ObjectSize(0, 0)
  };
  toString() {
    return "Listener_" + super.toString();
  }
}
export {
  Counter,
  Counter$Client,
  Counter$Server,
  Counter_Get$Params,
  Counter_Get$Results,
  Counter_Get$Results$Promise,
  Counter_Increment$Params,
  Counter_Increment$Results,
  Counter_Increment$Results$Promise,
  Counter_Present$Params,
  Counter_Present$Results,
  Counter_Present$Results$Promise,
  Counter_Watch$Params,
  Counter_Watch$Results,
  Counter_Watch$Results$Promise,
  Handle,
  Handle$Client,
  Handle$Server,
  Listener,
  Listener$Client,
  Listener$Server,
  Listener_Changed$Params,
  Listener_Changed$Results,
  Listener_Changed$Results$Promise,
  _capnpFileId
};
